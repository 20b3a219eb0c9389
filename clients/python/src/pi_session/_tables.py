# Generated from protocol/schema.json by clients/python/tools/generate.py; do not edit.
# Regenerate with:
#   UPDATE_PYTHON_CLIENT=1 cargo test --test suite -- python_client::
"""The typed method, hook and notification tables of the protocol."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NotRequired, TypedDict, Unpack, cast, overload

from .schema import (
    AnyEntry,
    AppendParams,
    AppendResult,
    BeforeCompactAnswer,
    BeforeCompactHook,
    BeforeForkAnswer,
    BeforeForkHook,
    BeforeTreeAnswer,
    BeforeTreeHook,
    BranchParams,
    BranchPathParams,
    BranchWithSummaryParams,
    ChangedNotification,
    ClientInfo,
    CompactNotification,
    CompactParams,
    CompactReason,
    CompactResult,
    CompactionPlanDocument,
    CompactionSettingsParam,
    ContextDocument,
    ContextEntriesParams,
    ContextFormat,
    ContextParams,
    ContextUsageParams,
    ContextUsageResult,
    ContinueRecentParams,
    CreateParams,
    DeleteParams,
    DeleteResult,
    DeterministicParam,
    Empty,
    EntriesPage,
    EntriesParams,
    EntriesResult,
    EntryParams,
    ExportFormat,
    ExportParams,
    ExportResult,
    ExtensionData,
    FindByIdParams,
    FindByIdResult,
    ForkFromParams,
    ForkParams,
    ForkPosition,
    ForkResult,
    GetTreeParams,
    GroupBy,
    HarnessMetadata,
    InfoResult,
    LeafResult,
    ListAllParams,
    ListField,
    ListParams,
    ListResult,
    NameFilter,
    NavigateResult,
    NewEntry,
    OpenParams,
    OpenedSession,
    PrepareCompactionParams,
    PrepareTreeResult,
    Profile,
    ProgressNotification,
    ProgressToken,
    SearchOutput,
    SearchParams,
    SearchSort,
    SessionRef,
    StatsOutput,
    StatsParams,
    StoreChangedNotification,
    SummariesParam,
    SummaryModelParam,
    SummaryParam,
    SummaryTextParam,
    SummaryUsage,
    TreeFilterName,
    TreeNotification,
    TreeParams,
    TreeResult,
    UnwatchResult,
    UnwatchStoreParams,
    UnwatchStoreResult,
    WatchEndedNotification,
    WatchResult,
    WatchStoreParams,
    WatchStoreResult,
)

PROTOCOL_TITLE = "pi-session protocol 0.9"
METHODS = (
    "initialize",
    "session/append",
    "session/branch",
    "session/branchWithSummary",
    "session/buildContext",
    "session/buildContextEntries",
    "session/close",
    "session/compact",
    "session/continueRecent",
    "session/create",
    "session/delete",
    "session/export",
    "session/findById",
    "session/fork",
    "session/forkFrom",
    "session/getBranch",
    "session/getChildren",
    "session/getContextUsage",
    "session/getEntries",
    "session/getEntry",
    "session/getInfo",
    "session/getTree",
    "session/list",
    "session/listAll",
    "session/navigateTree",
    "session/open",
    "session/prepareCompaction",
    "session/prepareTree",
    "session/resetLeaf",
    "session/search",
    "session/stats",
    "session/unwatch",
    "session/unwatchStore",
    "session/watch",
    "session/watchStore",
    "shutdown",
)
HOOKS = ("session_before_compact", "session_before_fork", "session_before_tree")
NOTIFICATIONS = (
    "$/cancelRequest",
    "$/progress",
    "session_changed",
    "session_compact",
    "session_tree",
    "session_watch_ended",
    "store_changed",
)
CLIENT_NOTIFICATIONS = ("$/cancelRequest", "exit", "initialized")


class AppendKeywords(TypedDict):
    """`AppendParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    entry: NewEntry
    """`{type, ...fields}` with pi's field names: `message` {message}, `model_change` {provider, modelId}, `thinking_level_change` {thinkingLevel}, `compaction` {summary, firstKeptEntryId? (null: pi-1.6), tokensBefore, details?, usage?, fromHook?, retainedTail? (harness)}, `custom` {customType, data?}, `custom_message` {customType, content, display?, details?}, `label` {targetId, label?}, `session_info` {name}, `active_tools_change` {activeToolNames} (harness), `context_edit` {targetId, replacement} (pi-1.6), `usage` {kind, provider, model, usage, note?} (pi-1.6)."""
    session_id: str


class BranchKeywords(TypedDict):
    """`BranchParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    entry_id: str
    session_id: str


class BranchPathKeywords(TypedDict):
    """`BranchPathParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    entry_id: NotRequired[str | None]
    limit: NotRequired[int | None]
    """At most this many entries (default: all)."""
    offset: NotRequired[int | None]
    """Skip this many entries of the path (default 0)."""
    session_id: str


class BranchWithSummaryKeywords(TypedDict):
    """`BranchWithSummaryParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    details: NotRequired[ExtensionData | None]
    from_hook: NotRequired[bool | None]
    session_id: str
    summary: str
    target_id: NotRequired[str | None]
    """The entry the summary hangs under; `null` for a new root."""
    usage: NotRequired[SummaryUsage | None]


class CompactKeywords(TypedDict):
    """`CompactParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    custom_instructions: NotRequired[str | None]
    leaf_id: NotRequired[str | None]
    """The leaf the caller prepared at: if the leaf has moved since, nothing is written (`leaf_moved`)."""
    reason: NotRequired[CompactReason | None]
    """Sent to the hook: `"manual"` (default), `"threshold"` or `"overflow"`."""
    session_id: str
    settings: NotRequired[CompactionSettingsParam | None]
    summaries: NotRequired[SummariesParam | None]
    """The model's answers to the preparation's requests."""


class ContextEntriesKeywords(TypedDict):
    """`ContextEntriesParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    leaf_id: NotRequired[str | None]
    """Another position than the leaf; `null` for before the first entry. Nothing moves."""
    limit: NotRequired[int | None]
    """At most this many entries (default: all)."""
    offset: NotRequired[int | None]
    """Skip this many entries of the whole answer (default 0)."""
    session_id: str


class ContextKeywords(TypedDict):
    """`ContextParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    format: NotRequired[ContextFormat]
    leaf_id: NotRequired[str | None]
    """Another position than the leaf; `null` for before the first entry. Nothing moves."""
    session_id: str


class ContextUsageKeywords(TypedDict):
    """`ContextUsageParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    context_window: NotRequired[float | None]
    """The model's context window: adds `threshold`, `shouldCompact` and `contextUsage`."""
    leaf_id: NotRequired[str | None]
    """Another position than the leaf; `null` for before the first entry. Nothing moves."""
    session_id: str
    settings: NotRequired[CompactionSettingsParam | None]


class ContinueRecentKeywords(TypedDict):
    """`ContinueRecentParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    cwd: str
    durable: NotRequired[bool]
    """Sync the session (opened or created) and every append to it before answering."""
    profile: NotRequired[Profile | None]
    session_dir: NotRequired[str | None]


class CreateKeywords(TypedDict):
    """`CreateParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    cwd: str
    """The project directory; the header `cwd` (resolved as pi resolves it for pi-cli)."""
    durable: NotRequired[bool]
    """Sync every append to disk before answering it."""
    id: NotRequired[str | None]
    """A fixed session id (validated as pi validates it); a new UUIDv7 otherwise."""
    in_memory: NotRequired[bool]
    """Keep the session in memory only: no file is ever written."""
    metadata: NotRequired[HarnessMetadata | None]
    """Header metadata (harness only)."""
    parent_session: NotRequired[str | None]
    """The session file this one continues from (header `parentSession`)."""
    profile: NotRequired[Profile | None]
    """Defaults to `initialize.defaultProfile`."""
    session_dir: NotRequired[str | None]
    """Write into this directory (flat) instead of `<sessionsRoot>/<encoded cwd>/`."""


class EntriesKeywords(TypedDict):
    """`EntriesParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    limit: NotRequired[int | None]
    """At most this many (default 1000); at least 1, so that `nextOffset` always advances."""
    offset: NotRequired[int]
    """Start after this many entries."""
    session_id: str
    since: NotRequired[str | None]
    """Start at this cursor (from any earlier answer of this session: `getEntries`, `open`, `watch`, `session_changed`; another connection's too, while the file is the same), instead of `offset`."""


class EntryKeywords(TypedDict):
    """`EntryParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    entry_id: str
    session_id: str


class ExportKeywords(TypedDict):
    """`ExportParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    format: NotRequired[ExportFormat]
    leaf_id: NotRequired[str | None]
    """The entry shown (html, md) or ended at (jsonl); default: the session's leaf."""
    path: NotRequired[str | None]
    """Where to write (`~`, relative and `file://` paths as pi reads them); a regular file there is replaced, a symlink refused. Default: `pi-session-<file name>.html|md` beside the session file; jsonl: a new session file beside it, named as pi names it."""
    session_id: str


class FindByIdKeywords(TypedDict):
    """`FindByIdParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    cwd: str
    id: str
    """The exact header id (a prefix does not match)."""
    profile: NotRequired[Profile | None]
    """`pi-1.6` (its `findById`) or `pi-cli` (pi 0.82.1's exact match over `list`); defaults to `initialize.defaultProfile`. The harness has no such lookup (`invalid_argument`)."""
    session_dir: NotRequired[str | None]
    """An explicit sessions directory (flat; filtered by header cwd)."""


class ForkFromKeywords(TypedDict):
    """`ForkFromParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    cwd: str
    """The new session's cwd."""
    durable: NotRequired[bool]
    """Sync the new file (and its directory) and every append to it before answering."""
    id: NotRequired[str | None]
    """A fixed id for the new session (validated as pi validates it)."""
    profile: NotRequired[Profile | None]
    """`pi-cli` or `pi-1.6` (the new session's profile); defaults to `initialize.defaultProfile`, or `pi-cli` when that is `harness` (`forkFrom` is pi's SessionManager's)."""
    session_dir: NotRequired[str | None]
    source_path: str


class ForkKeywords(TypedDict):
    """`ForkParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    durable: NotRequired[bool | None]
    """Sync the new session's file and every append to it before answering; default: as the session forked from."""
    entry_id: str
    position: NotRequired[ForkPosition]
    session_id: str


class GetTreeKeywords(TypedDict):
    """`GetTreeParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    around: NotRequired[str | None]
    """A window of `limit` rows around this entry (or its nearest shown ancestor, as pi's selector places its cursor), placed as pi's selector scrolls: the entry in the middle, clamped to the ends."""
    filter: NotRequired[TreeFilterName | None]
    """Only the rows pi's `/tree` selector shows in this mode (every mode also hides an assistant message with neither text nor an error, unless it is the leaf); absent: every row."""
    limit: NotRequired[int | None]
    """At most this many rows (default: all)."""
    offset: NotRequired[int | None]
    """Skip this many rows of the (filtered) pre-order (default 0). Not with `around`."""
    session_id: str


class InitializeKeywords(TypedDict):
    """`InitializeParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    client_info: NotRequired[ClientInfo | None]
    """Who the client is."""
    default_profile: NotRequired[Profile]
    """The writing profile of new sessions when a method does not say."""
    deterministic: NotRequired[DeterministicParam | None]
    """`true`, `false`, or `{seed?, startTime?}`; replaces `--deterministic` when present."""
    hook_timeout_ms: NotRequired[int]
    """How long the server waits for a hook answer, in milliseconds."""
    hooks: NotRequired[list[str]]
    """The hooks (server -> client requests) the client answers; no others are ever sent."""
    index: NotRequired[bool]
    """`false`: neither use nor write the persisted index for this connection's sessions (default `true`: on, unless the server runs with `--no-index` or `PI_SESSION_NO_INDEX`)."""
    process_id: NotRequired[int | None]
    """The client's process id: when that process dies, the server exits."""
    sessions_root: NotRequired[str | None]
    """The root of the sessions directories (default `<agentDir>/sessions`)."""


class ListAllKeywords(TypedDict):
    """`ListAllParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    fields: NotRequired[list[ListField] | None]
    """Only these members of each row (pi's `SessionInfo` names, e.g. `["path", "id", "name", "modified", "firstMessage"]`); default: every member. pi-cli, pi-1.6 only."""
    limit: NotRequired[int | None]
    """At most this many rows; default: all."""
    name_filter: NotRequired[NameFilter | None]
    """`all` (default) or `named` (only sessions with a name, as pi's name filter)."""
    offset: NotRequired[int | None]
    """Rows to skip (after searching and sorting); default 0."""
    profile: NotRequired[Profile | None]
    """Whose listing: defaults to `initialize.defaultProfile`."""
    query: NotRequired[str | None]
    """pi's `/resume` search, matched server-side: words matched fuzzily, `"quoted phrases"`, or `re:PATTERN`, against `id name allMessagesText cwd`. pi-cli, pi-1.6 only."""
    session_dir: NotRequired[str | None]
    """pi-cli, pi-1.6: one directory listed alone instead of every project under the root; harness: the sessions root instead of the server's."""
    sort: NotRequired[SearchSort | None]
    """With `query`: `relevance` (default: best match first, then newest, as pi's default view) or `recent` (newest first, as pi's recent view)."""


class ListKeywords(TypedDict):
    """`ListParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    cwd: str
    fields: NotRequired[list[ListField] | None]
    """Only these members of each row (pi's `SessionInfo` names, e.g. `["path", "id", "name", "modified", "firstMessage"]`); default: every member. pi-cli, pi-1.6 only."""
    limit: NotRequired[int | None]
    """At most this many rows; default: all."""
    name_filter: NotRequired[NameFilter | None]
    """`all` (default) or `named` (only sessions with a name, as pi's name filter)."""
    offset: NotRequired[int | None]
    """Rows to skip (after searching and sorting); default 0."""
    profile: NotRequired[Profile | None]
    """Whose listing: defaults to `initialize.defaultProfile`."""
    query: NotRequired[str | None]
    """pi's `/resume` search, matched server-side: words matched fuzzily, `"quoted phrases"`, or `re:PATTERN`, against `id name allMessagesText cwd`. pi-cli, pi-1.6 only."""
    session_dir: NotRequired[str | None]
    """An explicit sessions directory (flat; filtered by header cwd), as pi's `--session-dir`; harness: the sessions root instead of the server's."""
    sort: NotRequired[SearchSort | None]
    """With `query`: `relevance` (default: best match first, then newest, as pi's default view) or `recent` (newest first, as pi's recent view)."""


class PrepareCompactionKeywords(TypedDict):
    """`PrepareCompactionParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    custom_instructions: NotRequired[str | None]
    """Appended to the history request as pi does (`Additional focus: ...`)."""
    leaf_id: NotRequired[str | None]
    """Another position than the leaf; `null` for before the first entry. Nothing moves."""
    model: NotRequired[SummaryModelParam | None]
    session_id: str
    settings: NotRequired[CompactionSettingsParam | None]
    thinking_level: NotRequired[str | None]
    """Defaults to the level in force at the leaf (pi-cli) or `"off"` (harness)."""


class SearchKeywords(TypedDict):
    """`SearchParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    cwd: NotRequired[str | None]
    """Only the sessions of the project in this directory; omitted: every project."""
    limit: NotRequired[int | None]
    """At most this many hits (default 20)."""
    model: NotRequired[str | None]
    """`model` or `provider/model`."""
    offset: NotRequired[int]
    """Hits skipped first (default 0)."""
    on_path: NotRequired[bool]
    """Only entries on the path to each session's current leaf."""
    profile: NotRequired[Profile | None]
    """Whose reading (one index per profile); defaults to `initialize.defaultProfile`."""
    query: str
    """Words that must each appear, anywhere in the entry (case and diacritics ignored); `"a phrase"` must appear as written; a piece shorter than three characters is found by a bounded scan."""
    role: NotRequired[str | None]
    """`message.role` (user, assistant, toolResult, ...) or the entry type of other entries (compaction, branch_summary, custom_message, label, session_info)."""
    session_dir: NotRequired[str | None]
    """A flat sessions directory (pi's `--session-dir`) instead of the sessions root's project directories (harness: another sessions root); its own index."""
    since_ms: NotRequired[float | None]
    """Entries at or after this time (milliseconds since the epoch)."""
    thinking: NotRequired[bool]
    """Search thinking text too."""
    tool: NotRequired[str | None]
    """Entries that call or answer this tool."""
    until_ms: NotRequired[float | None]
    """Entries before this time (milliseconds since the epoch)."""
    work_done_token: NotRequired[ProgressToken | None]
    """`$/progress` is sent under this token while the index catches up (LSP's `WorkDoneProgressParams`)."""


class SessionRefKeywords(TypedDict):
    """`SessionRef` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    session_id: str


class StatsKeywords(TypedDict):
    """`StatsParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    by: NotRequired[GroupBy]
    """The groups (default `day`)."""
    cwd: NotRequired[str | None]
    """Only the sessions of the project in this directory; omitted: every project."""
    per_file: NotRequired[bool]
    """Each file summed as pi's `getSessionStats` counts it (copies counted in each file)."""
    profile: NotRequired[Profile | None]
    """Whose reading (one index per profile); defaults to `initialize.defaultProfile`."""
    session_dir: NotRequired[str | None]
    """A flat sessions directory (pi's `--session-dir`) instead of the sessions root's project directories (harness: another sessions root); its own index."""
    since: NotRequired[str | None]
    """First day counted (YYYY-MM-DD or YYYYMMDD, in `timezone`)."""
    timezone: NotRequired[str | None]
    """IANA name (`UTC`, `Europe/Paris`); omitted: the server machine's local time."""
    until: NotRequired[str | None]
    """Last day counted."""
    work_done_token: NotRequired[ProgressToken | None]
    """`$/progress` is sent under this token while the index catches up."""


class TreeKeywords(TypedDict):
    """`TreeParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    context_window: NotRequired[float | None]
    """The summarizing model's context window (pi's fallback when absent or 0: 128,000)."""
    custom_instructions: NotRequired[str | None]
    label: NotRequired[str | None]
    model: NotRequired[SummaryModelParam | None]
    """pi-1.6: the summarizing model (`reasoning`: the request then carries the thinking level)."""
    model_summary: NotRequired[SummaryTextParam | None]
    """The summarizing model's answer to `branchSummary.request` (`session/prepareTree`): written as pi's `generateBranchSummary` writes it (preamble, file lists, `details`)."""
    replace_instructions: NotRequired[bool | None]
    session_id: str
    settings: NotRequired[CompactionSettingsParam | None]
    """`branchSummary.reserveTokens` (default 16384; the harness always uses 16384)."""
    summarize: NotRequired[bool]
    summary: NotRequired[SummaryParam | None]
    """A ready summary of the abandoned branch (written by the caller's own model); used when `summarize` is set and no hook supplies one."""
    target_id: str
    thinking_level: NotRequired[str | None]
    """pi-1.6: the level passed as `reasoning`; defaults to the level in force at the leaf."""


class UnwatchStoreKeywords(TypedDict):
    """`UnwatchStoreParams` as keyword arguments: snake_case names, sent as the wire's camelCase."""

    watch_id: str


class SessionMethods:
    """The `session/...` requests, typed."""

    def __init__(self, client: Requests) -> None:
        self._client = client

    @overload
    async def create(self, **params: Unpack[CreateKeywords]) -> OpenedSession: ...
    @overload
    async def create(self, **params: Unpack[CreateParams]) -> OpenedSession: ...
    async def create(self, **params: Any) -> OpenedSession:
        """`session/create`: a new session."""
        return cast(
            "OpenedSession", await self._client.request("session/create", params)
        )

    async def open(self, **params: Unpack[OpenParams]) -> OpenedSession:
        """`session/open`: an existing file, for reading and appending."""
        return cast("OpenedSession", await self._client.request("session/open", params))

    @overload
    async def continue_recent(
        self, **params: Unpack[ContinueRecentKeywords]
    ) -> OpenedSession: ...
    @overload
    async def continue_recent(
        self, **params: Unpack[ContinueRecentParams]
    ) -> OpenedSession: ...
    async def continue_recent(self, **params: Any) -> OpenedSession:
        """`session/continueRecent`: pi's `--continue`."""
        return cast(
            "OpenedSession",
            await self._client.request("session/continueRecent", params),
        )

    @overload
    async def fork_from(self, **params: Unpack[ForkFromKeywords]) -> OpenedSession: ...
    @overload
    async def fork_from(self, **params: Unpack[ForkFromParams]) -> OpenedSession: ...
    async def fork_from(self, **params: Any) -> OpenedSession:
        """`session/forkFrom`: pi's `--fork`, a whole session copied into another project."""
        return cast(
            "OpenedSession", await self._client.request("session/forkFrom", params)
        )

    @overload
    async def list(self, **params: Unpack[ListKeywords]) -> ListResult: ...
    @overload
    async def list(self, **params: Unpack[ListParams]) -> ListResult: ...
    async def list(self, **params: Any) -> ListResult:
        """`session/list`: the sessions of a cwd, as the profile's pi lists them (pi's `/resume` list, or the harness's `JsonlSessionRepo.list({cwd})`)."""
        return cast("ListResult", await self._client.request("session/list", params))

    @overload
    async def list_all(self, **params: Unpack[ListAllKeywords]) -> ListResult: ...
    @overload
    async def list_all(self, **params: Unpack[ListAllParams]) -> ListResult: ...
    async def list_all(self, **params: Any) -> ListResult:
        """`session/listAll`: every project's sessions."""
        return cast("ListResult", await self._client.request("session/listAll", params))

    @overload
    async def find_by_id(
        self, **params: Unpack[FindByIdKeywords]
    ) -> FindByIdResult: ...
    @overload
    async def find_by_id(self, **params: Unpack[FindByIdParams]) -> FindByIdResult: ...
    async def find_by_id(self, **params: Any) -> FindByIdResult:
        """`session/findById`: pi 1.6's `SessionManager.findById`, the file of an exact session id."""
        return cast(
            "FindByIdResult", await self._client.request("session/findById", params)
        )

    async def delete(self, **params: Unpack[DeleteParams]) -> DeleteResult:
        """`session/delete`: a session file and its listing cache row."""
        return cast(
            "DeleteResult", await self._client.request("session/delete", params)
        )

    @overload
    async def search(self, **params: Unpack[SearchKeywords]) -> SearchOutput: ...
    @overload
    async def search(self, **params: Unpack[SearchParams]) -> SearchOutput: ...
    async def search(self, **params: Any) -> SearchOutput:
        """`session/search`: the entries of every session (or one project's) that hold the query, from the store index, brought up to date first. (The `search` command's input, its members spelled out here so that unknown members are refused as in every other method.)"""
        return cast(
            "SearchOutput", await self._client.request("session/search", params)
        )

    @overload
    async def stats(self, **params: Unpack[StatsKeywords]) -> StatsOutput: ...
    @overload
    async def stats(self, **params: Unpack[StatsParams]) -> StatsOutput: ...
    async def stats(self, **params: Any) -> StatsOutput:
        """`session/stats`: usage figures across the store, each message counted once (or per file)."""
        return cast("StatsOutput", await self._client.request("session/stats", params))

    async def watch_store(self, **params: Unpack[WatchStoreParams]) -> WatchStoreResult:
        """`session/watchStore`: every file of the store (or of one project) created, appended to, replaced, renamed or deleted, told as `store_changed` notifications, each with a durable cursor."""
        return cast(
            "WatchStoreResult", await self._client.request("session/watchStore", params)
        )

    @overload
    async def unwatch_store(
        self, **params: Unpack[UnwatchStoreKeywords]
    ) -> UnwatchStoreResult: ...
    @overload
    async def unwatch_store(
        self, **params: Unpack[UnwatchStoreParams]
    ) -> UnwatchStoreResult: ...
    async def unwatch_store(self, **params: Any) -> UnwatchStoreResult:
        """`session/unwatchStore`: ends a store watch."""
        return cast(
            "UnwatchStoreResult",
            await self._client.request("session/unwatchStore", params),
        )

    @overload
    async def close(self, **params: Unpack[SessionRefKeywords]) -> Empty: ...
    @overload
    async def close(self, **params: Unpack[SessionRef]) -> Empty: ...
    async def close(self, **params: Any) -> Empty:
        """`session/close`: see protocol/protocol.md."""
        return cast("Empty", await self._client.request("session/close", params))

    @overload
    async def watch(self, **params: Unpack[SessionRefKeywords]) -> WatchResult: ...
    @overload
    async def watch(self, **params: Unpack[SessionRef]) -> WatchResult: ...
    async def watch(self, **params: Any) -> WatchResult:
        """`session/watch`: see protocol/protocol.md."""
        return cast("WatchResult", await self._client.request("session/watch", params))

    @overload
    async def unwatch(self, **params: Unpack[SessionRefKeywords]) -> UnwatchResult: ...
    @overload
    async def unwatch(self, **params: Unpack[SessionRef]) -> UnwatchResult: ...
    async def unwatch(self, **params: Any) -> UnwatchResult:
        """`session/unwatch`: see protocol/protocol.md."""
        return cast(
            "UnwatchResult", await self._client.request("session/unwatch", params)
        )

    @overload
    async def append(self, **params: Unpack[AppendKeywords]) -> AppendResult: ...
    @overload
    async def append(self, **params: Unpack[AppendParams]) -> AppendResult: ...
    async def append(self, **params: Any) -> AppendResult:
        """`session/append`: one new entry, as a child of the leaf."""
        return cast(
            "AppendResult", await self._client.request("session/append", params)
        )

    @overload
    async def branch(self, **params: Unpack[BranchKeywords]) -> LeafResult: ...
    @overload
    async def branch(self, **params: Unpack[BranchParams]) -> LeafResult: ...
    async def branch(self, **params: Any) -> LeafResult:
        """`session/branch`: move the leaf to an entry."""
        return cast("LeafResult", await self._client.request("session/branch", params))

    @overload
    async def reset_leaf(self, **params: Unpack[SessionRefKeywords]) -> LeafResult: ...
    @overload
    async def reset_leaf(self, **params: Unpack[SessionRef]) -> LeafResult: ...
    async def reset_leaf(self, **params: Any) -> LeafResult:
        """`session/resetLeaf`: see protocol/protocol.md."""
        return cast(
            "LeafResult", await self._client.request("session/resetLeaf", params)
        )

    @overload
    async def branch_with_summary(
        self, **params: Unpack[BranchWithSummaryKeywords]
    ) -> LeafResult: ...
    @overload
    async def branch_with_summary(
        self, **params: Unpack[BranchWithSummaryParams]
    ) -> LeafResult: ...
    async def branch_with_summary(self, **params: Any) -> LeafResult:
        """`session/branchWithSummary`: move the leaf and attach a branch summary there."""
        return cast(
            "LeafResult",
            await self._client.request("session/branchWithSummary", params),
        )

    @overload
    async def prepare_tree(
        self, **params: Unpack[TreeKeywords]
    ) -> PrepareTreeResult: ...
    @overload
    async def prepare_tree(self, **params: Unpack[TreeParams]) -> PrepareTreeResult: ...
    async def prepare_tree(self, **params: Any) -> PrepareTreeResult:
        """`session/prepareTree` and `session/navigateTree`."""
        return cast(
            "PrepareTreeResult",
            await self._client.request("session/prepareTree", params),
        )

    @overload
    async def navigate_tree(self, **params: Unpack[TreeKeywords]) -> NavigateResult: ...
    @overload
    async def navigate_tree(self, **params: Unpack[TreeParams]) -> NavigateResult: ...
    async def navigate_tree(self, **params: Any) -> NavigateResult:
        """`session/prepareTree` and `session/navigateTree`."""
        return cast(
            "NavigateResult", await self._client.request("session/navigateTree", params)
        )

    @overload
    async def fork(self, **params: Unpack[ForkKeywords]) -> ForkResult: ...
    @overload
    async def fork(self, **params: Unpack[ForkParams]) -> ForkResult: ...
    async def fork(self, **params: Any) -> ForkResult:
        """`session/fork`: a new session from the path before a user message (`before`, pi's `/fork`) or up to an entry (`at`, pi's `/clone`)."""
        return cast("ForkResult", await self._client.request("session/fork", params))

    @overload
    async def export(self, **params: Unpack[ExportKeywords]) -> ExportResult: ...
    @overload
    async def export(self, **params: Unpack[ExportParams]) -> ExportResult: ...
    async def export(self, **params: Any) -> ExportResult:
        """`session/export`: the session as a self-contained HTML page, a Markdown document of one path, or one branch as a new session file (`pi-session export`)."""
        return cast(
            "ExportResult", await self._client.request("session/export", params)
        )

    @overload
    async def build_context(
        self, **params: Unpack[ContextKeywords]
    ) -> ContextDocument: ...
    @overload
    async def build_context(
        self, **params: Unpack[ContextParams]
    ) -> ContextDocument: ...
    async def build_context(self, **params: Any) -> ContextDocument:
        """`session/buildContext` and `session/buildContextEntries`."""
        return cast(
            "ContextDocument",
            await self._client.request("session/buildContext", params),
        )

    @overload
    async def build_context_entries(
        self, **params: Unpack[ContextEntriesKeywords]
    ) -> EntriesResult: ...
    @overload
    async def build_context_entries(
        self, **params: Unpack[ContextEntriesParams]
    ) -> EntriesResult: ...
    async def build_context_entries(self, **params: Any) -> EntriesResult:
        """`session/buildContextEntries`."""
        return cast(
            "EntriesResult",
            await self._client.request("session/buildContextEntries", params),
        )

    @overload
    async def get_tree(self, **params: Unpack[GetTreeKeywords]) -> TreeResult: ...
    @overload
    async def get_tree(self, **params: Unpack[GetTreeParams]) -> TreeResult: ...
    async def get_tree(self, **params: Any) -> TreeResult:
        """`session/getTree`: the whole tree, or a page or window of it, as pi's selector filters it."""
        return cast("TreeResult", await self._client.request("session/getTree", params))

    @overload
    async def get_entry(self, **params: Unpack[EntryKeywords]) -> AnyEntry: ...
    @overload
    async def get_entry(self, **params: Unpack[EntryParams]) -> AnyEntry: ...
    async def get_entry(self, **params: Any) -> AnyEntry:
        """`session/getEntry` and `session/getChildren`."""
        return cast("AnyEntry", await self._client.request("session/getEntry", params))

    @overload
    async def get_entries(self, **params: Unpack[EntriesKeywords]) -> EntriesPage: ...
    @overload
    async def get_entries(self, **params: Unpack[EntriesParams]) -> EntriesPage: ...
    async def get_entries(self, **params: Any) -> EntriesPage:
        """`session/getEntries`: entries in file order, a page at a time."""
        return cast(
            "EntriesPage", await self._client.request("session/getEntries", params)
        )

    @overload
    async def get_children(self, **params: Unpack[EntryKeywords]) -> EntriesResult: ...
    @overload
    async def get_children(self, **params: Unpack[EntryParams]) -> EntriesResult: ...
    async def get_children(self, **params: Any) -> EntriesResult:
        """`session/getEntry` and `session/getChildren`."""
        return cast(
            "EntriesResult", await self._client.request("session/getChildren", params)
        )

    @overload
    async def get_branch(
        self, **params: Unpack[BranchPathKeywords]
    ) -> EntriesResult: ...
    @overload
    async def get_branch(self, **params: Unpack[BranchPathParams]) -> EntriesResult: ...
    async def get_branch(self, **params: Any) -> EntriesResult:
        """`session/getBranch`: the path to an entry (the leaf by default)."""
        return cast(
            "EntriesResult", await self._client.request("session/getBranch", params)
        )

    @overload
    async def get_info(self, **params: Unpack[SessionRefKeywords]) -> InfoResult: ...
    @overload
    async def get_info(self, **params: Unpack[SessionRef]) -> InfoResult: ...
    async def get_info(self, **params: Any) -> InfoResult:
        """`session/getInfo`: see protocol/protocol.md."""
        return cast("InfoResult", await self._client.request("session/getInfo", params))

    @overload
    async def get_context_usage(
        self, **params: Unpack[ContextUsageKeywords]
    ) -> ContextUsageResult: ...
    @overload
    async def get_context_usage(
        self, **params: Unpack[ContextUsageParams]
    ) -> ContextUsageResult: ...
    async def get_context_usage(self, **params: Any) -> ContextUsageResult:
        """`session/getContextUsage`: pi's context-size figures at the leaf (or `leafId`)."""
        return cast(
            "ContextUsageResult",
            await self._client.request("session/getContextUsage", params),
        )

    @overload
    async def prepare_compaction(
        self, **params: Unpack[PrepareCompactionKeywords]
    ) -> CompactionPlanDocument: ...
    @overload
    async def prepare_compaction(
        self, **params: Unpack[PrepareCompactionParams]
    ) -> CompactionPlanDocument: ...
    async def prepare_compaction(self, **params: Any) -> CompactionPlanDocument:
        """`session/prepareCompaction`: what pi would summarize if it compacted now."""
        return cast(
            "CompactionPlanDocument",
            await self._client.request("session/prepareCompaction", params),
        )

    @overload
    async def compact(self, **params: Unpack[CompactKeywords]) -> CompactResult: ...
    @overload
    async def compact(self, **params: Unpack[CompactParams]) -> CompactResult: ...
    async def compact(self, **params: Any) -> CompactResult:
        """`session/compact`: compact at the leaf as pi does, with the model's answers."""
        return cast(
            "CompactResult", await self._client.request("session/compact", params)
        )


class Requests:
    """The requests: each group as an attribute (`self.session.append(...)`), any
    request without a group as a method."""

    session: SessionMethods

    def _bind_request_groups(self) -> None:
        self.session = SessionMethods(self)

    async def request(self, method: str, params: Any = None) -> Any:
        raise NotImplementedError


class HookTable:
    """Register hook handlers: `client.hooks.session_before_tree(handler)` or as a decorator."""

    def _register(self, hook: str, handler: Callable[[Any], Awaitable[Any]]) -> None:
        raise NotImplementedError

    def session_before_tree(
        self, handler: Callable[[BeforeTreeHook], Awaitable[BeforeTreeAnswer | None]]
    ) -> Callable[[BeforeTreeHook], Awaitable[BeforeTreeAnswer | None]]:
        """Answer `session_before_tree` with `handler` (before `initialize`, which declares it)."""
        self._register("session_before_tree", handler)
        return handler

    def session_before_fork(
        self, handler: Callable[[BeforeForkHook], Awaitable[BeforeForkAnswer | None]]
    ) -> Callable[[BeforeForkHook], Awaitable[BeforeForkAnswer | None]]:
        """Answer `session_before_fork` with `handler` (before `initialize`, which declares it)."""
        self._register("session_before_fork", handler)
        return handler

    def session_before_compact(
        self,
        handler: Callable[[BeforeCompactHook], Awaitable[BeforeCompactAnswer | None]],
    ) -> Callable[[BeforeCompactHook], Awaitable[BeforeCompactAnswer | None]]:
        """Answer `session_before_compact` with `handler` (before `initialize`, which declares it)."""
        self._register("session_before_compact", handler)
        return handler


class NotificationTable:
    """Subscribe to notifications: `client.notifications.session_tree(callback)`."""

    def _subscribe(self, name: str, callback: Callable[[Any], None]) -> None:
        raise NotImplementedError

    def session_tree(
        self, callback: Callable[[TreeNotification], None]
    ) -> Callable[[TreeNotification], None]:
        """Call `callback` with every `session_tree` (before the answer of the request
        that caused it is delivered)."""
        self._subscribe("session_tree", callback)
        return callback

    def session_compact(
        self, callback: Callable[[CompactNotification], None]
    ) -> Callable[[CompactNotification], None]:
        """Call `callback` with every `session_compact` (before the answer of the request
        that caused it is delivered)."""
        self._subscribe("session_compact", callback)
        return callback

    def session_changed(
        self, callback: Callable[[ChangedNotification], None]
    ) -> Callable[[ChangedNotification], None]:
        """Call `callback` with every `session_changed` (before the answer of the request
        that caused it is delivered)."""
        self._subscribe("session_changed", callback)
        return callback

    def session_watch_ended(
        self, callback: Callable[[WatchEndedNotification], None]
    ) -> Callable[[WatchEndedNotification], None]:
        """Call `callback` with every `session_watch_ended` (before the answer of the request
        that caused it is delivered)."""
        self._subscribe("session_watch_ended", callback)
        return callback

    def store_changed(
        self, callback: Callable[[StoreChangedNotification], None]
    ) -> Callable[[StoreChangedNotification], None]:
        """Call `callback` with every `store_changed` (before the answer of the request
        that caused it is delivered)."""
        self._subscribe("store_changed", callback)
        return callback

    def progress(
        self, callback: Callable[[ProgressNotification], None]
    ) -> Callable[[ProgressNotification], None]:
        """Call `callback` with every `$/progress` (before the answer of the request
        that caused it is delivered)."""
        self._subscribe("$/progress", callback)
        return callback
