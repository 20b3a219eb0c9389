# Generated from protocol/schema.json by clients/python/tools/generate.py
# (datamodel-codegen); do not edit. Regenerate with:
#   UPDATE_PYTHON_CLIENT=1 cargo test --test suite -- python_client::

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

PiSessionProtocol09: TypeAlias = Any
"""
Generated from the Rust types (src/rpc/schema.rs); do not edit. `methods`: client -> server requests; `hooks`: server -> client requests; `notifications`: server -> client; `clientNotifications`: client -> server. See protocol/protocol.md.
"""


class ActiveToolsChangeEntry(TypedDict):
    """
    harness only: the active tools from here on.
    """

    activeToolNames: list[str]
    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['active_tools_change']


class AppendResult(TypedDict):
    entryId: str
    leafId: NotRequired[str | None]


class BashExecutionMessage(TypedDict):
    """
    pi's `BashExecutionMessage` (the `!` command).
    """

    cancelled: bool
    command: str
    excludeFromContext: NotRequired[bool | None]
    """
    `!!`: left out of the model's context.
    """
    exitCode: NotRequired[float | None]
    """
    Absent when the command did not exit (cancelled).
    """
    fullOutputPath: NotRequired[str | None]
    output: str
    role: Literal['bashExecution']
    timestamp: float
    truncated: bool


class BeforeForkAnswer(TypedDict):
    """
    The `session_before_fork` hook's answer.
    """

    cancel: NotRequired[bool]


class BranchParams(TypedDict):
    """
    `session/branch`: move the leaf to an entry.
    """

    entryId: str
    sessionId: str


class BranchPathParams(TypedDict):
    """
    `session/getBranch`: the path to an entry (the leaf by default).
    """

    entryId: NotRequired[str | None]
    limit: NotRequired[int | None]
    """
    At most this many entries (default: all).
    """
    offset: NotRequired[int | None]
    """
    Skip this many entries of the path (default 0).
    """
    sessionId: str


class BranchSummaryMessage(TypedDict):
    """
    pi's `BranchSummaryMessage` (a `branch_summary` entry in a context).
    """

    fromId: str
    role: Literal['branchSummary']
    summary: str
    timestamp: float


class BranchSummarySection(TypedDict):
    """
    `settings.branchSummary`.
    """

    reserveTokens: NotRequired[float | None]
    skipPrompt: NotRequired[bool | None]
    """
    Read by pi's interactive `/tree` only (whether to ask); accepted, not used here.
    """


class ClientInfo(TypedDict):
    """
    Who the client is, as it says in `initialize`.
    """

    name: str
    """
    The client's name.
    """
    version: NotRequired[str | None]
    """
    The client's version.
    """


CompactReason: TypeAlias = Literal['manual', 'threshold', 'overflow']
"""
Why a compaction runs (pi's `reason`).
"""


class CompactionEntryIds(TypedDict):
    """
    The entries behind each list of a compaction preparation.
    """

    history: list[str]
    kept: list[str]
    turnPrefix: list[str]


class CompactionSection(TypedDict):
    """
    `settings.compaction`.
    """

    enabled: NotRequired[bool | None]
    keepRecentTokens: NotRequired[float | None]
    reserveTokens: NotRequired[float | None]


class CompactionSettings(TypedDict):
    """
    pi's `CompactionSettings` in force.
    """

    enabled: bool
    keepRecentTokens: float
    reserveTokens: float


class CompactionSettingsParam(TypedDict):
    """
    pi's `settings.json` sections the compaction methods read; every member optional, pi's defaults for the rest (`enabled` true, `reserveTokens` 16384, `keepRecentTokens` 20000).
    """

    branchSummary: NotRequired[BranchSummarySection]
    compaction: NotRequired[CompactionSection]


class CompactionSummaryMessage(TypedDict):
    """
    pi's `CompactionSummaryMessage` (a `compaction` entry in a context).
    """

    role: Literal['compactionSummary']
    summary: str
    timestamp: float
    tokensBefore: float


class ContextEntriesParams(TypedDict):
    """
    `session/buildContextEntries`.
    """

    leafId: NotRequired[str | None]
    """
    Another position than the leaf; `null` for before the first entry. Nothing moves.
    """
    limit: NotRequired[int | None]
    """
    At most this many entries (default: all).
    """
    offset: NotRequired[int | None]
    """
    Skip this many entries of the whole answer (default 0).
    """
    sessionId: str


class ContextEstimateDocument(TypedDict):
    """
    `estimateContextTokens`'s figures.
    """

    lastUsageEntryId: NotRequired[str | None]
    """
    The entry of that message.
    """
    lastUsageIndex: NotRequired[int | None]
    """
    Index into the context's messages of the assistant whose usage was taken.
    """
    tokens: float
    trailingTokens: float
    usageTokens: float


ContextFormat: TypeAlias = Literal['agent'] | Literal['llm']
"""
Which form of messages `session/buildContext` returns.
"""


class ContextModel(TypedDict):
    """
    The model in a context.
    """

    modelId: str
    provider: str


class ContextParams(TypedDict):
    """
    `session/buildContext` and `session/buildContextEntries`.
    """

    format: NotRequired[ContextFormat]
    leafId: NotRequired[str | None]
    """
    Another position than the leaf; `null` for before the first entry. Nothing moves.
    """
    sessionId: str


class ContextUsageFigures(TypedDict):
    """
    `AgentSession.getContextUsage()`.
    """

    contextWindow: float
    percent: NotRequired[float | None]
    tokens: NotRequired[float | None]


class ContextUsageParams(TypedDict):
    """
    `session/getContextUsage`: pi's context-size figures at the leaf (or `leafId`).
    """

    contextWindow: NotRequired[float | None]
    """
    The model's context window: adds `threshold`, `shouldCompact` and `contextUsage`.
    """
    leafId: NotRequired[str | None]
    """
    Another position than the leaf; `null` for before the first entry. Nothing moves.
    """
    sessionId: str
    settings: NotRequired[CompactionSettingsParam | None]


class ContextUsageResult(TypedDict):
    """
    `session/getContextUsage`'s result.
    """

    contextUsage: NotRequired[ContextUsageFigures | None]
    """
    pi-cli, with a window > 0: `AgentSession.getContextUsage()` (`tokens` and `percent` null after a compaction until an assistant reports usage again).
    """
    contextWindow: NotRequired[float | None]
    estimate: ContextEstimateDocument
    """
    `estimateContextTokens(buildSessionContext(path).messages)` plus `lastUsageEntryId`.
    """
    leafId: NotRequired[str | None]
    settings: CompactionSettings
    """
    The compaction settings in force (`{enabled, reserveTokens, keepRecentTokens}`).
    """
    shouldCompact: NotRequired[bool | None]
    """
    `shouldCompact(tokens, contextWindow, settings)`.
    """
    threshold: NotRequired[float | None]
    """
    `contextWindow - reserveTokens`.
    """


class DeleteParams(TypedDict):
    """
    `session/delete`: a session file and its listing cache row.
    """

    path: str


class DeleteResult(TypedDict):
    deleted: bool
    """
    `false` when the file was already gone.
    """


class DeterministicParam1(TypedDict):
    """
    Either member may be left out.
    """

    seed: NotRequired[int | None]
    startTime: NotRequired[str | None]


DeterministicParam: TypeAlias = bool | DeterministicParam1
"""
`initialize.deterministic` as a client writes it (the schema of `deserialize_deterministic`).
"""


class DeterministicWire(TypedDict):
    """
    How [`Deterministic`] travels: `{seed, startTime}` (the schema of its `Serialize`).
    """

    seed: int
    """
    Seed for id generation.
    """
    startTime: str
    """
    The clock's first reading (RFC 3339, milliseconds, UTC).
    """


class Empty(TypedDict):
    pass


class EntriesParams(TypedDict):
    """
    `session/getEntries`: entries in file order, a page at a time.
    """

    limit: NotRequired[int | None]
    """
    At most this many (default 1000); at least 1, so that `nextOffset` always advances.
    """
    offset: NotRequired[int]
    """
    Start after this many entries.
    """
    sessionId: str
    since: NotRequired[str | None]
    """
    Start at this cursor (from any earlier answer of this session: `getEntries`, `open`, `watch`, `session_changed`; another connection's too, while the file is the same), instead of `offset`.
    """


class EntryParams(TypedDict):
    """
    `session/getEntry` and `session/getChildren`.
    """

    entryId: str
    sessionId: str


ExportFormat: TypeAlias = Literal['html'] | Literal['md'] | Literal['jsonl']
"""
What an export writes.
"""


class ExportParams(TypedDict):
    """
    `session/export`: the session as a self-contained HTML page, a Markdown document of one path, or one branch as a new session file (`pi-session export`).
    """

    format: NotRequired[ExportFormat]
    leafId: NotRequired[str | None]
    """
    The entry shown (html, md) or ended at (jsonl); default: the session's leaf.
    """
    path: NotRequired[str | None]
    """
    Where to write (`~`, relative and `file://` paths as pi reads them); a regular file there is replaced, a symlink refused. Default: `pi-session-<file name>.html|md` beside the session file; jsonl: a new session file beside it, named as pi names it.
    """
    sessionId: str


class ExportResult(TypedDict):
    """
    What `session/export` wrote.
    """

    bytes: int
    """
    Its size.
    """
    format: ExportFormat
    leafId: NotRequired[str | None]
    """
    The entry the export shows or ends at (`null`: no entry there).
    """
    path: str
    """
    The file written.
    """


ExtensionData: TypeAlias = Any
"""
Extension data (a custom entry's `data`, the `details` of a compaction, branch summary, custom message or tool result): any JSON value, as the extension wrote it.
"""


FeedKind: TypeAlias = Literal['created', 'appended', 'replaced', 'renamed', 'deleted']
"""
What happened to a file, as the log tells it.
"""


class Figures(TypedDict):
    """
    Figures of a group, named as ccusage's `--json` names them.
    """

    assistantMessages: int
    cacheCreationTokens: float
    cacheReadTokens: float
    inputTokens: float
    outputTokens: float
    toolCalls: int
    totalCost: float
    totalTokens: float


class FileOperations(TypedDict):
    """
    pi's `FileOperations`, its sets as arrays in insertion order.
    """

    edited: list[str]
    read: list[str]
    written: list[str]


class FindByIdResult(TypedDict):
    path: NotRequired[str | None]
    """
    The session file, or `null` when no session has that id.
    """


ForkPosition: TypeAlias = Literal['before', 'at']
"""
`/fork` copies the path before a user message; `/clone` the path up to an entry.
"""


GroupBy: TypeAlias = Literal['day', 'week', 'month', 'model', 'project', 'session']


HarnessMetadata: TypeAlias = dict[str, Any]
"""
The harness session header's `metadata` (and its listing rows'): an object whose members are the application's own.
"""


class HarnessSessionRow(TypedDict):
    """
    The harness's `JsonlSessionMetadata`: a listing row of `profile: harness`.
    """

    createdAt: str
    cwd: str
    id: str
    metadata: NotRequired[HarnessMetadata | None]
    parentSessionPath: NotRequired[str | None]
    path: str


class ImageContent(TypedDict):
    """
    pi-ai's `ImageContent`.
    """

    data: str
    """
    Base64.
    """
    mimeType: str
    type: Literal['image']


class LabelEntry(TypedDict):
    """
    pi's `LabelEntry` (no `label`: the label is removed).
    """

    id: str
    label: NotRequired[str | None]
    parentId: str | None
    """
    `null` for a root.
    """
    targetId: str
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['label']


class LeafEntry(TypedDict):
    """
    harness only: the leaf moved (`null`: before the first entry).
    """

    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    targetId: str | None
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['leaf']


class LeafResult(TypedDict):
    """
    The leaf after a move.
    """

    entryId: NotRequired[str | None]
    """
    The entry written by the move, if any (a branch summary).
    """
    leafId: NotRequired[str | None]


ListField: TypeAlias = Literal[
    'path',
    'id',
    'cwd',
    'name',
    'parentSessionPath',
    'created',
    'modified',
    'messageCount',
    'firstMessage',
    'allMessagesText',
]
"""
A member of pi's `SessionInfo`, named as pi names it: what a client asks for in `fields`.
"""


class ModelChangeEntry(TypedDict):
    """
    pi's `ModelChangeEntry`.
    """

    id: str
    modelId: str
    parentId: str | None
    """
    `null` for a root.
    """
    provider: str
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['model_change']


class ModelFigures(TypedDict):
    """
    Figures of a group, named as ccusage's `--json` names them.
    """

    assistantMessages: int
    cacheCreationTokens: float
    cacheReadTokens: float
    inputTokens: float
    modelName: str
    outputTokens: float
    toolCalls: int
    totalCost: float
    totalTokens: float


NameFilter: TypeAlias = Literal['all'] | Literal['named']
"""
Which sessions the picker offers before the query is applied.
"""


class NewActiveToolsChangeEntry(TypedDict):
    """
    harness only: the active tools from here on.
    """

    activeToolNames: list[str]
    type: Literal['active_tools_change']


class NewCustomEntry(TypedDict):
    """
    pi's `CustomEntry`: an extension's state, not part of the context.
    """

    customType: str
    data: NotRequired[ExtensionData | None]
    type: Literal['custom']


class NewLabelEntry(TypedDict):
    """
    pi's `LabelEntry` (no `label`: the label is removed).
    """

    label: NotRequired[str | None]
    targetId: str
    type: Literal['label']


class NewLeafEntry(TypedDict):
    """
    harness only: the leaf moved (`null`: before the first entry).
    """

    targetId: str | None
    type: Literal['leaf']


class NewModelChangeEntry(TypedDict):
    """
    pi's `ModelChangeEntry`.
    """

    modelId: str
    provider: str
    type: Literal['model_change']


class NewSessionInfoEntry(TypedDict):
    """
    pi's `SessionInfoEntry` (the session's name).
    """

    name: NotRequired[str | None]
    type: Literal['session_info']


class NewThinkingLevelChangeEntry(TypedDict):
    """
    pi's `ThinkingLevelChangeEntry`.
    """

    thinkingLevel: str
    type: Literal['thinking_level_change']


NoParams: TypeAlias = dict[str, Any] | None
"""
No params: omitted, `null` or `{}` (ignored).
"""


class Pending(TypedDict):
    """
    What the index does not hold yet: the answer came from the rest.
    """

    bytes: int
    """
    About how many bytes of them are still to read.
    """
    files: int
    """
    Session files new, grown or changed since they were indexed (or whose text is not).
    """


Profile: TypeAlias = Literal['pi-cli'] | Literal['pi-1.6'] | Literal['harness']
"""
Which pi implementation a session reads and writes like.
"""


ProgressToken: TypeAlias = int | str
"""
A `$/progress` token, as LSP's `ProgressToken`: chosen by the client (`workDoneToken`).
"""


RequestId: TypeAlias = int | str
"""
A request id: a string or a non-negative integer.
"""


class SearchHit(TypedDict):
    entryId: NotRequired[str | None]
    line: int
    """
    The entry's line in its file (1-based).
    """
    onPath: bool
    """
    On the path to the session's current leaf (else on an abandoned branch).
    """
    role: NotRequired[str | None]
    score: NotRequired[float | None]
    """
    bm25 (lower ranks first); `None` for hits found by the scan for short pieces.
    """
    sessionId: str
    sessionName: NotRequired[str | None]
    sessionPath: str
    snippet: str
    """
    Folded text around the match, the match between « and ».
    """
    timestamp: NotRequired[str | None]
    """
    ISO 8601, UTC.
    """


class SearchParams(TypedDict):
    """
    `session/search`: the entries of every session (or one project's) that hold the query, from the store index, brought up to date first. (The `search` command's input, its members spelled out here so that unknown members are refused as in every other method.)
    """

    cwd: NotRequired[str | None]
    """
    Only the sessions of the project in this directory; omitted: every project.
    """
    limit: NotRequired[int | None]
    """
    At most this many hits (default 20).
    """
    model: NotRequired[str | None]
    """
    `model` or `provider/model`.
    """
    offset: NotRequired[int]
    """
    Hits skipped first (default 0).
    """
    onPath: NotRequired[bool]
    """
    Only entries on the path to each session's current leaf.
    """
    profile: NotRequired[Profile | None]
    """
    Whose reading (one index per profile); defaults to `initialize.defaultProfile`.
    """
    query: str
    """
    Words that must each appear, anywhere in the entry (case and diacritics ignored); `"a phrase"` must appear as written; a piece shorter than three characters is found by a bounded scan.
    """
    role: NotRequired[str | None]
    """
    `message.role` (user, assistant, toolResult, ...) or the entry type of other entries (compaction, branch_summary, custom_message, label, session_info).
    """
    sessionDir: NotRequired[str | None]
    """
    A flat sessions directory (pi's `--session-dir`) instead of the sessions root's project directories (harness: another sessions root); its own index.
    """
    sinceMs: NotRequired[float | None]
    """
    Entries at or after this time (milliseconds since the epoch).
    """
    thinking: NotRequired[bool]
    """
    Search thinking text too.
    """
    tool: NotRequired[str | None]
    """
    Entries that call or answer this tool.
    """
    untilMs: NotRequired[float | None]
    """
    Entries before this time (milliseconds since the epoch).
    """
    workDoneToken: NotRequired[ProgressToken | None]
    """
    `$/progress` is sent under this token while the index catches up (LSP's `WorkDoneProgressParams`).
    """


SearchSort: TypeAlias = Literal['relevance'] | Literal['recent']
"""
How matches are ordered, as pi's selector orders them with a query.
"""


class ServerInfo(TypedDict):
    """
    `serverInfo`.
    """

    name: str
    """
    [`SERVER_NAME`].
    """
    version: str
    """
    The package version.
    """


class SessionHeader(TypedDict):
    """
    pi's `SessionHeader`, the file's first line (harness: with `metadata`).
    """

    cwd: str
    id: str
    metadata: NotRequired[HarnessMetadata | None]
    """
    harness only.
    """
    parentSession: NotRequired[str | None]
    """
    The session file this one was forked from.
    """
    timestamp: str
    type: Literal['session']
    version: NotRequired[float | None]
    """
    The format version (3; absent in version 1 files).
    """


class SessionInfoEntry(TypedDict):
    """
    pi's `SessionInfoEntry` (the session's name).
    """

    id: str
    name: NotRequired[str | None]
    parentId: str | None
    """
    `null` for a root.
    """
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['session_info']


class SessionInfoRow(TypedDict):
    """
    pi's `SessionInfo` as JSON (dates as ISO 8601 strings). Every member is present unless `fields` names fewer; `name` and `parentSessionPath` only when the session has them.
    """

    allMessagesText: NotRequired[str | None]
    created: NotRequired[str | None]
    cwd: NotRequired[str | None]
    """
    The header's cwd (`""` for old sessions).
    """
    firstMessage: NotRequired[str | None]
    id: NotRequired[str | None]
    messageCount: NotRequired[float | None]
    modified: NotRequired[str | None]
    name: NotRequired[str | None]
    parentSessionPath: NotRequired[str | None]
    path: NotRequired[str | None]


class SessionRef(TypedDict):
    """
    Names an open session.
    """

    sessionId: str


SessionRow: TypeAlias = SessionInfoRow | HarnessSessionRow
"""
A row of `session/list`/`listAll`: pi's `SessionInfo` (pi-cli, pi-1.6), or the harness's `JsonlSessionMetadata`.
"""


class SessionStats(TypedDict):
    assistantMessages: int
    cacheReadTokens: float
    cacheWriteTokens: float
    costTotal: float
    inputTokens: float
    messageCount: int
    outputTokens: float
    toolCalls: int
    toolResults: int
    totalTokens: float
    """
    input + output + cacheRead + cacheWrite.
    """
    userMessages: int


class StatsParams(TypedDict):
    """
    `session/stats`: usage figures across the store, each message counted once (or per file).
    """

    by: NotRequired[GroupBy]
    """
    The groups (default `day`).
    """
    cwd: NotRequired[str | None]
    """
    Only the sessions of the project in this directory; omitted: every project.
    """
    perFile: NotRequired[bool]
    """
    Each file summed as pi's `getSessionStats` counts it (copies counted in each file).
    """
    profile: NotRequired[Profile | None]
    """
    Whose reading (one index per profile); defaults to `initialize.defaultProfile`.
    """
    sessionDir: NotRequired[str | None]
    """
    A flat sessions directory (pi's `--session-dir`) instead of the sessions root's project directories (harness: another sessions root); its own index.
    """
    since: NotRequired[str | None]
    """
    First day counted (YYYY-MM-DD or YYYYMMDD, in `timezone`).
    """
    timezone: NotRequired[str | None]
    """
    IANA name (`UTC`, `Europe/Paris`); omitted: the server machine's local time.
    """
    until: NotRequired[str | None]
    """
    Last day counted.
    """
    workDoneToken: NotRequired[ProgressToken | None]
    """
    `$/progress` is sent under this token while the index catches up.
    """


StopReason: TypeAlias = Literal[
    'stop', 'length', 'toolUse', 'error', 'aborted', 'pending', 'deferred'
]
"""
pi-ai's `StopReason` (`pending` and `deferred`: pi 1.6).
"""


class StoreIndexCapabilities(TypedDict):
    """
    `capabilities.storeIndex`.
    """

    groupBy: list[GroupBy]
    """
    The values of `session/stats`' `by`.
    """
    searchPending: bool
    """
    `session/search` answers at once while another process builds the index, from what it has filed, and says what is left (`pending`).
    """
    sessionDir: bool
    """
    `session/search` and `session/stats` take `sessionDir` (a flat sessions directory).
    """
    workDoneProgress: bool
    """
    A `workDoneToken` in the params is answered with `$/progress` while the index catches up (LSP's work-done progress).
    """


StringOrNumber: TypeAlias = str | float
"""
A string or a number.
"""


class SummaryModelParam(TypedDict):
    """
    The model fields the summarizing requests depend on.
    """

    maxTokens: NotRequired[float | None]
    """
    The model's `maxTokens` (caps each request's `maxTokens` when > 0).
    """
    reasoning: NotRequired[bool]
    """
    Whether the model reasons (requests then carry `reasoning: thinkingLevel` unless off).
    """


SummaryPurpose: TypeAlias = (
    Literal['history'] | Literal['turnPrefix'] | Literal['branchSummary']
)
"""
What a summarizing request is for.
"""


class SyncReport(TypedDict):
    """
    What bringing the index up to date did.
    """

    entriesIndexed: int
    """
    Entries read and filed in this run.
    """
    files: int
    grew: int
    new: int
    removed: int
    replaced: int
    skipped: list[str]
    """
    Session files that could not be read (path: reason); they are left out.
    """


class TextContent(TypedDict):
    """
    pi-ai's `TextContent`.
    """

    text: str
    textSignature: NotRequired[str | None]
    type: Literal['text']


class ThinkingContent(TypedDict):
    """
    pi-ai's `ThinkingContent`.
    """

    redacted: NotRequired[bool | None]
    """
    The thinking was redacted; its encrypted payload is in `thinkingSignature`.
    """
    thinking: str
    thinkingSignature: NotRequired[str | None]
    type: Literal['thinking']


class ThinkingLevelChangeEntry(TypedDict):
    """
    pi's `ThinkingLevelChangeEntry`.
    """

    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    thinkingLevel: str
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['thinking_level_change']


ToolArguments: TypeAlias = dict[str, Any]
"""
A tool call's `arguments`: an object whose members are the tool's own.
"""


class ToolCall(TypedDict):
    """
    pi-ai's `ToolCall`.
    """

    arguments: ToolArguments
    id: str
    name: str
    thoughtSignature: NotRequired[str | None]
    type: Literal['toolCall']


ToolParameters: TypeAlias = dict[str, Any]
"""
A tool's `parameters` (the JSON Schema of its arguments) in a pi 1.6 system message.
"""


class ToolReference(TypedDict):
    """
    pi-ai's `ToolReference`.
    """

    name: str


TreeFilterName: TypeAlias = (
    Literal['default']
    | Literal['no-tools']
    | Literal['user-only']
    | Literal['labeled-only']
    | Literal['all']
)
"""
pi 0.82.1's `/tree` selector filter modes.
"""


class TreeRow(TypedDict):
    """
    One row of `session/getTree`: the tree flattened depth-first in pre-order (children in the profile's pi order), so deep sessions never nest.
    """

    depth: int
    id: NotRequired[str | None]
    label: NotRequired[str | None]
    onPath: bool
    """
    On the path from the root to the leaf.
    """
    parentId: NotRequired[str | None]
    preview: str
    type: NotRequired[str | None]


class UnknownEntry(TypedDict):
    """
    An entry whose `type` is none of SessionEntry's (pi's readers keep such lines, and so does this server, which answers them as the file holds them). Passthrough: the clients' generated types leave it out of SessionEntry so that narrowing on `type` works; a client that may meet newer pi files checks `type` against the kinds it knows.
    """

    type: str


class UnknownMessage(TypedDict):
    """
    A message whose `role` is none of AgentMessage's (an extension may declare its own roles in pi's `CustomAgentMessages`); answered as the file holds it. Passthrough: the clients' generated types leave it out of AgentMessage so that narrowing on `role` works.
    """

    role: str


class UnwatchResult(TypedDict):
    """
    `session/unwatch`'s answer.
    """

    ended: bool
    """
    Whether a watch was ended (`false`: the session was not watched).
    """


class UnwatchStoreParams(TypedDict):
    """
    `session/unwatchStore`: ends a store watch.
    """

    watchId: str


class UnwatchStoreResult(TypedDict):
    """
    `session/unwatchStore`'s answer.
    """

    ended: bool
    """
    Whether a watch was ended (`false`: no such watch).
    """


class UsageCost(TypedDict):
    """
    `Usage.cost`.
    """

    cacheRead: float
    cacheWrite: float
    input: float
    output: float
    total: float
    totalFromProvider: NotRequired[bool | None]
    """
    pi 1.6: `total` is the provider's billed cost.
    """


UserContentBlock: TypeAlias = TextContent | ImageContent
"""
A block of a user, custom or tool-result message: text or an image.
"""


class Warning(TypedDict):
    """
    A line the lenient reader skipped, with why.
    """

    line: int
    """
    1-based physical line (0 when the warning is not about one line).
    """
    message: str


WatchEndReason: TypeAlias = (
    Literal['deleted'] | Literal['replaced'] | Literal['truncated'] | Literal['error']
)
"""
Why a watch ended by itself.
"""


class WatchEndedNotification(TypedDict):
    """
    The `session_watch_ended` notification: a watch ended without `session/unwatch` or `session/close`, because the file can no longer be followed. Sent after the last `session_changed` of the watch; the session stays open (reopen it to read the new file).
    """

    message: str
    """
    Names the file and what happened to it.
    """
    reason: WatchEndReason
    sessionId: str


class WatchResult(TypedDict):
    """
    `session/watch`'s answer.
    """

    cursor: str
    """
    The point after the session's last entry when the watch began: every later entry another program appends reaches the client in a `session_changed`.
    """
    started: bool
    """
    `false` when the session was watched already (one watch per session; this call changed nothing).
    """


class WatchStoreCapabilities(TypedDict):
    """
    `capabilities.watchStore`.
    """

    eventEntries: int
    """
    At most this many entries in one `store_changed` (a bigger change comes in several, the later ones `appended`).
    """
    pollIntervalMs: int
    """
    How often a polled store is looked at (`poll`, or a network or FUSE file system).
    """


class WatchStoreParams(TypedDict):
    """
    `session/watchStore`: every file of the store (or of one project) created, appended to, replaced, renamed or deleted, told as `store_changed` notifications, each with a durable cursor.
    """

    cwd: NotRequired[str | None]
    """
    Only the sessions of the project in this directory.
    """
    dir: NotRequired[str | None]
    """
    The sessions root, or one project folder in it; omitted: the store's sessions root.
    """
    poll: NotRequired[bool]
    """
    Look at the files every `capabilities.watchStore.pollIntervalMs` instead of waiting for the OS's change events (always so on network and FUSE file systems).
    """
    profile: NotRequired[Profile | None]
    """
    Whose reading (one store index per profile); defaults to `initialize.defaultProfile`.
    """
    since: NotRequired[str | None]
    """
    Go on after this cursor (the last `store_changed.cursor` the client kept; `"0"`: the whole store from the start of the index's change log); omitted: from now on.
    """


class WatchStoreResult(TypedDict):
    """
    `session/watchStore`'s answer.
    """

    cursor: str
    """
    Where the notifications begin (`since`, or the end of the change log when none was given). The first notifications may come before this answer.
    """
    polled: bool
    """
    `true` when the files are polled (asked for, or a network or FUSE file system).
    """
    watchId: str
    """
    Names this watch in its notifications and in `session/unwatchStore`.
    """


WireFraming: TypeAlias = Literal['lsp'] | Literal['ndjson']
"""
The framing actually in use on the wire, once decided.
"""


class WorkDoneProgress1(TypedDict):
    """
    LSP's `WorkDoneProgressBegin`, `...Report` and `...End`, told apart by `kind`.
    """

    cancellable: bool
    """
    The client cannot cancel the indexing on its own (`$/cancelRequest` still ends the request's wait).
    """
    kind: Literal['begin']
    message: NotRequired[str | None]
    percentage: NotRequired[int | None]
    """
    0 to 100.
    """
    title: str


class WorkDoneProgress2(TypedDict):
    """
    LSP's `WorkDoneProgressBegin`, `...Report` and `...End`, told apart by `kind`.
    """

    kind: Literal['report']
    message: NotRequired[str | None]
    percentage: NotRequired[int | None]


class WorkDoneProgress3(TypedDict):
    """
    LSP's `WorkDoneProgressBegin`, `...Report` and `...End`, told apart by `kind`.
    """

    kind: Literal['end']
    message: NotRequired[str | None]


WorkDoneProgress: TypeAlias = WorkDoneProgress1 | WorkDoneProgress2 | WorkDoneProgress3
"""
LSP's `WorkDoneProgressBegin`, `...Report` and `...End`, told apart by `kind`.
"""


AssistantContentBlock: TypeAlias = TextContent | ThinkingContent | ToolCall
"""
A block of an assistant message: text, thinking or a tool call.
"""


class BeforeForkHook(TypedDict):
    """
    The `session_before_fork` hook's params.
    """

    entryId: str
    position: ForkPosition
    sessionId: str


class CancelRequest(TypedDict):
    """
    `$/cancelRequest` params, in both directions.
    """

    id: RequestId
    """
    The id of the request to cancel.
    """


class ClientSettings(TypedDict):
    """
    What the client and the command line settled on; every method can read it.
    """

    clientInfo: NotRequired[ClientInfo | None]
    """
    Who the client is.
    """
    defaultProfile: NotRequired[Profile]
    """
    The writing profile of new sessions when a method does not say.
    """
    deterministic: NotRequired[DeterministicWire | None]
    """
    Reproducible ids and timestamps, when on.
    """
    framing: WireFraming
    """
    The framing on the wire.
    """
    hookTimeoutMs: int
    """
    How long to wait for a hook answer.
    """
    hooks: list[str]
    """
    The hooks the client answers.
    """
    index: NotRequired[bool]
    """
    `false`: neither use nor write the persisted index for this connection's sessions (default `true`: on, unless the server runs with `--no-index` or `PI_SESSION_NO_INDEX`).
    """
    processId: NotRequired[int | None]
    """
    The parent process watched for life, if any.
    """
    sessionsRoot: NotRequired[str | None]
    """
    The root of the sessions directories (default `<agentDir>/sessions`).
    """


ContentBlock: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall
"""
Any content block (a pi 1.6 `context_edit` replacement may hold any message's).
"""


ContextEditableContent: TypeAlias = str | list[ContentBlock]
"""
What a `context_edit` may put in place of a message's content.
"""


class ContextReplacement(TypedDict):
    """
    A `context_edit`'s replacement content.
    """

    content: ContextEditableContent


class ContinueRecentParams(TypedDict):
    """
    `session/continueRecent`: pi's `--continue`.
    """

    cwd: str
    durable: NotRequired[bool]
    """
    Sync the session (opened or created) and every append to it before answering.
    """
    profile: NotRequired[Profile | None]
    sessionDir: NotRequired[str | None]


class CreateParams(TypedDict):
    """
    `session/create`: a new session.
    """

    cwd: str
    """
    The project directory; the header `cwd` (resolved as pi resolves it for pi-cli).
    """
    durable: NotRequired[bool]
    """
    Sync every append to disk before answering it.
    """
    id: NotRequired[str | None]
    """
    A fixed session id (validated as pi validates it); a new UUIDv7 otherwise.
    """
    inMemory: NotRequired[bool]
    """
    Keep the session in memory only: no file is ever written.
    """
    metadata: NotRequired[HarnessMetadata | None]
    """
    Header metadata (harness only).
    """
    parentSession: NotRequired[str | None]
    """
    The session file this one continues from (header `parentSession`).
    """
    profile: NotRequired[Profile | None]
    """
    Defaults to `initialize.defaultProfile`.
    """
    sessionDir: NotRequired[str | None]
    """
    Write into this directory (flat) instead of `<sessionsRoot>/<encoded cwd>/`.
    """


class CustomEntry(TypedDict):
    """
    pi's `CustomEntry`: an extension's state, not part of the context.
    """

    customType: str
    data: NotRequired[ExtensionData | None]
    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['custom']


class DeferredHandle(TypedDict):
    """
    pi 1.6's `DeferredHandle`.
    """

    api: str
    data: NotRequired[ExtensionData | None]
    expiresAt: NotRequired[float | None]
    id: str
    modelId: str
    pollAfterMs: NotRequired[float | None]
    provider: str


class DiagnosticErrorInfo(TypedDict):
    """
    pi-ai's `DiagnosticErrorInfo`.
    """

    code: NotRequired[StringOrNumber | None]
    message: str
    name: NotRequired[str | None]
    stack: NotRequired[str | None]


class FindByIdParams(TypedDict):
    """
    `session/findById`: pi 1.6's `SessionManager.findById`, the file of an exact session id.
    """

    cwd: str
    id: str
    """
    The exact header id (a prefix does not match).
    """
    profile: NotRequired[Profile | None]
    """
    `pi-1.6` (its `findById`) or `pi-cli` (pi 0.82.1's exact match over `list`); defaults to `initialize.defaultProfile`. The harness has no such lookup (`invalid_argument`).
    """
    sessionDir: NotRequired[str | None]
    """
    An explicit sessions directory (flat; filtered by header cwd).
    """


class ForkFromParams(TypedDict):
    """
    `session/forkFrom`: pi's `--fork`, a whole session copied into another project.
    """

    cwd: str
    """
    The new session's cwd.
    """
    durable: NotRequired[bool]
    """
    Sync the new file (and its directory) and every append to it before answering.
    """
    id: NotRequired[str | None]
    """
    A fixed id for the new session (validated as pi validates it).
    """
    profile: NotRequired[Profile | None]
    """
    `pi-cli` or `pi-1.6` (the new session's profile); defaults to `initialize.defaultProfile`, or `pi-cli` when that is `harness` (`forkFrom` is pi's SessionManager's).
    """
    sessionDir: NotRequired[str | None]
    sourcePath: str


class ForkParams(TypedDict):
    """
    `session/fork`: a new session from the path before a user message (`before`, pi's `/fork`) or up to an entry (`at`, pi's `/clone`).
    """

    durable: NotRequired[bool | None]
    """
    Sync the new session's file and every append to it before answering; default: as the session forked from.
    """
    entryId: str
    position: NotRequired[ForkPosition]
    sessionId: str


class GetTreeParams(TypedDict):
    """
    `session/getTree`: the whole tree, or a page or window of it, as pi's selector filters it.
    """

    around: NotRequired[str | None]
    """
    A window of `limit` rows around this entry (or its nearest shown ancestor, as pi's selector places its cursor), placed as pi's selector scrolls: the entry in the middle, clamped to the ends.
    """
    filter: NotRequired[TreeFilterName | None]
    """
    Only the rows pi's `/tree` selector shows in this mode (every mode also hides an assistant message with neither text nor an error, unless it is the leaf); absent: every row.
    """
    limit: NotRequired[int | None]
    """
    At most this many rows (default: all).
    """
    offset: NotRequired[int | None]
    """
    Skip this many rows of the (filtered) pre-order (default 0). Not with `around`.
    """
    sessionId: str


class Group(TypedDict):
    """
    Figures of a group, named as ccusage's `--json` names them.
    """

    assistantMessages: int
    cacheCreationTokens: float
    cacheReadTokens: float
    inputTokens: float
    key: str
    """
    The day, week (its Monday), month, model, project directory or session id.
    """
    modelBreakdowns: list[ModelFigures]
    modelsUsed: list[str]
    outputTokens: float
    toolCalls: int
    totalCost: float
    totalTokens: float


class InfoResult(TypedDict):
    entryCount: int
    header: SessionHeader
    leafId: NotRequired[str | None]
    name: NotRequired[str | None]
    path: NotRequired[str | None]
    profile: Profile
    sessionId: str
    stats: SessionStats
    written: bool


class InitializeParams(TypedDict):
    """
    `initialize` params. Unknown members are ignored, so newer clients can talk to this server.
    """

    clientInfo: NotRequired[ClientInfo | None]
    """
    Who the client is.
    """
    defaultProfile: NotRequired[Profile]
    """
    The writing profile of new sessions when a method does not say.
    """
    deterministic: NotRequired[DeterministicParam | None]
    """
    `true`, `false`, or `{seed?, startTime?}`; replaces `--deterministic` when present.
    """
    hookTimeoutMs: NotRequired[int]
    """
    How long the server waits for a hook answer, in milliseconds.
    """
    hooks: NotRequired[list[str]]
    """
    The hooks (server -> client requests) the client answers; no others are ever sent.
    """
    index: NotRequired[bool]
    """
    `false`: neither use nor write the persisted index for this connection's sessions (default `true`: on, unless the server runs with `--no-index` or `PI_SESSION_NO_INDEX`).
    """
    processId: NotRequired[int | None]
    """
    The client's process id: when that process dies, the server exits.
    """
    sessionsRoot: NotRequired[str | None]
    """
    The root of the sessions directories (default `<agentDir>/sessions`).
    """


class ListAllParams(TypedDict):
    """
    `session/listAll`: every project's sessions.
    """

    fields: NotRequired[list[ListField] | None]
    """
    Only these members of each row (pi's `SessionInfo` names, e.g. `["path", "id", "name", "modified", "firstMessage"]`); default: every member. pi-cli, pi-1.6 only.
    """
    limit: NotRequired[int | None]
    """
    At most this many rows; default: all.
    """
    nameFilter: NotRequired[NameFilter | None]
    """
    `all` (default) or `named` (only sessions with a name, as pi's name filter).
    """
    offset: NotRequired[int | None]
    """
    Rows to skip (after searching and sorting); default 0.
    """
    profile: NotRequired[Profile | None]
    """
    Whose listing: defaults to `initialize.defaultProfile`.
    """
    query: NotRequired[str | None]
    """
    pi's `/resume` search, matched server-side: words matched fuzzily, `"quoted phrases"`, or `re:PATTERN`, against `id name allMessagesText cwd`. pi-cli, pi-1.6 only.
    """
    sessionDir: NotRequired[str | None]
    """
    pi-cli, pi-1.6: one directory listed alone instead of every project under the root; harness: the sessions root instead of the server's.
    """
    sort: NotRequired[SearchSort | None]
    """
    With `query`: `relevance` (default: best match first, then newest, as pi's default view) or `recent` (newest first, as pi's recent view).
    """


class ListParams(TypedDict):
    """
    `session/list`: the sessions of a cwd, as the profile's pi lists them (pi's `/resume` list, or the harness's `JsonlSessionRepo.list({cwd})`).
    """

    cwd: str
    fields: NotRequired[list[ListField] | None]
    """
    Only these members of each row (pi's `SessionInfo` names, e.g. `["path", "id", "name", "modified", "firstMessage"]`); default: every member. pi-cli, pi-1.6 only.
    """
    limit: NotRequired[int | None]
    """
    At most this many rows; default: all.
    """
    nameFilter: NotRequired[NameFilter | None]
    """
    `all` (default) or `named` (only sessions with a name, as pi's name filter).
    """
    offset: NotRequired[int | None]
    """
    Rows to skip (after searching and sorting); default 0.
    """
    profile: NotRequired[Profile | None]
    """
    Whose listing: defaults to `initialize.defaultProfile`.
    """
    query: NotRequired[str | None]
    """
    pi's `/resume` search, matched server-side: words matched fuzzily, `"quoted phrases"`, or `re:PATTERN`, against `id name allMessagesText cwd`. pi-cli, pi-1.6 only.
    """
    sessionDir: NotRequired[str | None]
    """
    An explicit sessions directory (flat; filtered by header cwd), as pi's `--session-dir`; harness: the sessions root instead of the server's.
    """
    sort: NotRequired[SearchSort | None]
    """
    With `query`: `relevance` (default: best match first, then newest, as pi's default view) or `recent` (newest first, as pi's recent view).
    """


class ListWarning(TypedDict):
    """
    A file the listing passed over, and why; or a listed file holding what only pi 1.6 writes, in a profile that does not read it as pi 1.6 does (then `line` and `useProfile` are set).
    """

    line: NotRequired[int | None]
    """
    The first line holding the pi 1.6 feature.
    """
    path: str
    reason: str
    useProfile: NotRequired[Profile | None]
    """
    The profile that reads the file as its pi wrote it (`pi-1.6`).
    """


class ListingCapabilities(TypedDict):
    """
    `capabilities.listing`.
    """

    fields: list[ListField]
    """
    The names `fields` may take (pi's `SessionInfo` members, in pi's key order).
    """
    nameFilter: list[NameFilter]
    """
    The values of `nameFilter`.
    """
    paging: bool
    """
    `offset`/`limit` are taken and `total` answered.
    """
    pi16Warnings: bool
    """
    Listed files holding what only pi 1.6 writes are warned of (`line`, `useProfile`).
    """
    query: bool
    """
    `query` is matched server-side as pi's `/resume` search.
    """
    sort: list[SearchSort]
    """
    The values of `sort`.
    """


class NewContextEditEntry(TypedDict):
    """
    pi 1.6 only: an earlier entry's part of the context replaced (`null`: left out).
    """

    replacement: ContextReplacement | None
    targetId: str
    type: Literal['context_edit']


class OpenParams(TypedDict):
    """
    `session/open`: an existing file, for reading and appending.
    """

    cwd: NotRequired[str | None]
    """
    The cwd of a session started at a path that does not exist yet (pi-cli); defaults to the server's working directory.
    """
    durable: NotRequired[bool]
    """
    Sync every append to disk before answering it.
    """
    path: str
    profile: NotRequired[Profile | None]


class OpenedSession(TypedDict):
    """
    What `session/create`, `session/open`, `session/continueRecent`, `session/forkFrom` and `session/fork` return about the session now open.
    """

    cursor: str
    """
    The point after the session's last entry (`getEntries.since` reads what follows).
    """
    header: SessionHeader
    leafId: NotRequired[str | None]
    path: NotRequired[str | None]
    """
    Where the session is written (`null` in memory).
    """
    profile: Profile
    sessionId: str
    warnings: list[Warning]
    """
    Lines the reader skipped or migrated, with their line numbers.
    """
    written: bool
    """
    Whether the file exists yet (pi-cli writes it at the first assistant message).
    """


class PrepareCompactionParams(TypedDict):
    """
    `session/prepareCompaction`: what pi would summarize if it compacted now.
    """

    customInstructions: NotRequired[str | None]
    """
    Appended to the history request as pi does (`Additional focus: ...`).
    """
    leafId: NotRequired[str | None]
    """
    Another position than the leaf; `null` for before the first entry. Nothing moves.
    """
    model: NotRequired[SummaryModelParam | None]
    sessionId: str
    settings: NotRequired[CompactionSettingsParam | None]
    thinkingLevel: NotRequired[str | None]
    """
    Defaults to the level in force at the leaf (pi-cli) or `"off"` (harness).
    """


class ProgressNotification(TypedDict):
    """
    `$/progress` (LSP's): the work a request with a `workDoneToken` is doing.
    """

    token: ProgressToken
    value: WorkDoneProgress


class SearchOutput(TypedDict):
    hits: list[SearchHit]
    index: SyncReport
    """
    What bringing the index up to date did first.
    """
    note: NotRequired[str | None]
    """
    Why the persisted index could not be used, when it was not.
    """
    pending: NotRequired[Pending | None]
    """
    Another process was building the index: the hits come from what it had filed, and this much was left (`null`: the index was up to date).
    """


class StatsOutput(TypedDict):
    by: GroupBy
    countedTwicePerFile: NotRequired[Figures | None]
    """
    Counting once: what summing each file would add (the copies up fork chains).
    """
    groups: list[Group]
    index: SyncReport
    note: NotRequired[str | None]
    perFile: bool
    totals: Figures


class SummaryUsage(TypedDict):
    """
    The `usage` of a compaction or branch summary: pi's `Usage` when pi wrote it, but stored as the extension or client gave it (a hook's answer, `summaries`, `modelSummary`), so no member is sure to be there.
    """

    cacheRead: NotRequired[float | None]
    cacheWrite: NotRequired[float | None]
    cacheWrite1h: NotRequired[float | None]
    cost: NotRequired[UsageCost | None]
    input: NotRequired[float | None]
    output: NotRequired[float | None]
    reasoning: NotRequired[float | None]
    totalTokens: NotRequired[float | None]


SystemContent: TypeAlias = str | list[TextContent]
"""
A system message's `content`: a string or text blocks.
"""


class Tool(TypedDict):
    """
    pi-ai's `Tool`, as a pi 1.6 system message declares it.
    """

    constrainedSampling: NotRequired[ToolParameters | None]
    """
    `false`, or the provider-side constrained sampling configuration.
    """
    description: str
    name: str
    parameters: ToolParameters


class TreeResult(TypedDict):
    anchor: NotRequired[int | None]
    """
    With `around`: the index (in the whole pre-order) of the row the window is placed on; `null` when no row is shown.
    """
    leafId: NotRequired[str | None]
    offset: int
    """
    The index of the first row here in the whole (filtered) pre-order.
    """
    rows: list[TreeRow]
    total: int
    """
    How many rows the whole (filtered) tree has.
    """


class Usage(TypedDict):
    """
    pi-ai's `Usage` (token counts and cost), as an assistant message, a compaction or branch summary, or a pi 1.6 `usage` entry carries it.
    """

    cacheRead: float
    cacheWrite: float
    cacheWrite1h: NotRequired[float | None]
    """
    Part of `cacheWrite` written with 1h retention (Anthropic).
    """
    cost: UsageCost
    input: float
    output: float
    reasoning: NotRequired[float | None]
    """
    Reasoning tokens, part of `output`, when the provider reports them.
    """
    totalTokens: NotRequired[float | None]
    """
    pi writes it; files of older pi versions lack it.
    """


class UsageEntry(TypedDict):
    """
    pi 1.6 only: usage outside a message (e.g. `cache_warm`).
    """

    id: str
    kind: str
    model: str
    note: NotRequired[str | None]
    parentId: str | None
    """
    `null` for a root.
    """
    provider: str
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['usage']
    usage: Usage


UserContent: TypeAlias = str | list[UserContentBlock]
"""
A user or custom message's `content`: a string, or text and image blocks.
"""


class UserMessage(TypedDict):
    """
    pi-ai's `UserMessage`.
    """

    content: UserContent
    role: Literal['user']
    timestamp: float
    """
    Milliseconds since the epoch.
    """


class AssistantMessageDiagnostic(TypedDict):
    """
    pi-ai's `AssistantMessageDiagnostic`.
    """

    details: NotRequired[ExtensionData | None]
    error: NotRequired[DiagnosticErrorInfo | None]
    timestamp: float
    type: str


class BranchSummaryEntry(TypedDict):
    """
    pi's `BranchSummaryEntry`.
    """

    details: NotRequired[ExtensionData | None]
    fromHook: NotRequired[bool | None]
    fromId: str
    """
    The entry navigated away from.
    """
    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    summary: str
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['branch_summary']
    usage: NotRequired[SummaryUsage | None]


class BranchWithSummaryParams(TypedDict):
    """
    `session/branchWithSummary`: move the leaf and attach a branch summary there.
    """

    details: NotRequired[ExtensionData | None]
    fromHook: NotRequired[bool | None]
    sessionId: str
    summary: str
    targetId: NotRequired[str | None]
    """
    The entry the summary hangs under; `null` for a new root.
    """
    usage: NotRequired[SummaryUsage | None]


class Capabilities(TypedDict):
    """
    `capabilities` in the `initialize` result.
    """

    batches: bool
    """
    Batches are refused.
    """
    branchSummaries: bool
    """
    pi's branch summarizer without the model call: `branchSummary` in `session/prepareTree` and `session_before_tree`, `modelSummary` in `session/navigateTree`.
    """
    cancelRequest: bool
    """
    `$/cancelRequest` is understood in both directions.
    """
    clientNotifications: list[str]
    """
    Notifications the client may send, sorted.
    """
    compaction: dict[str, str]
    """
    Whose compaction and branch-summary code each profile follows (every profile offers `getContextUsage`, `prepareCompaction`, `compact` and `branchSummary`).
    """
    exactEntries: bool
    """
    Entries and contexts reach the client with the file's strings exactly, lone surrogate escapes included.
    """
    exportFormats: list[ExportFormat]
    """
    The `format`s `session/export` writes.
    """
    hooks: list[str]
    """
    Hooks the server may send (only those the client declared are ever sent), sorted.
    """
    listing: ListingCapabilities
    """
    What `session/list` and `session/listAll` select beside pi's rows.
    """
    maxFrameBytes: int
    """
    The frame size limit in bytes.
    """
    maxPendingRequests: int
    """
    Requests read and not yet answered above which no new request starts (backpressure).
    """
    maxUnsentBytes: int
    """
    Bytes of output not yet read by the client above which no new request starts.
    """
    notifications: list[str]
    """
    Notifications the server may send, sorted.
    """
    paging: dict[str, list[str]]
    """
    The methods that may answer a part of their answer, with the params that choose it.
    """
    persistedIndex: bool
    """
    Opens may use the persisted index, and `initialize.index` (`false`) turns it off.
    """
    profiles: list[Profile]
    """
    The profiles a `profile` member may name (the default first); `pi-0.82` is also accepted, as another name of `pi-cli`.
    """
    storeIndex: StoreIndexCapabilities
    """
    `session/search` and `session/stats`: the store index across every session.
    """
    treeFilters: list[TreeFilterName]
    """
    The `filter` modes of `session/getTree` (pi 0.82.1's `/tree` selector).
    """
    watch: bool
    """
    `session/watch`: other programs' appends are sent as they happen (`session_changed` with the entries), and answers carry cursors that `getEntries.since` resumes from.
    """
    watchStore: WatchStoreCapabilities
    """
    `session/watchStore`: the store's live feed (`store_changed`), with durable cursors.
    """


class ContextEditEntry(TypedDict):
    """
    pi 1.6 only: an earlier entry's part of the context replaced (`null`: left out).
    """

    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    replacement: ContextReplacement | None
    targetId: str
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['context_edit']


class CustomMessage(TypedDict):
    """
    pi's `CustomMessage` (an extension's `sendMessage`).
    """

    content: UserContent
    customType: str
    details: NotRequired[ExtensionData | None]
    display: bool
    role: Literal['custom']
    timestamp: float


class CustomMessageEntry(TypedDict):
    """
    pi's `CustomMessageEntry`: an extension's message, part of the context.
    """

    content: UserContent
    customType: str
    details: NotRequired[ExtensionData | None]
    display: bool
    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['custom_message']


class ForkResult(TypedDict):
    cancelled: bool
    selectedText: NotRequired[str | None]
    """
    The forked user message's text, for the editor (`before` only).
    """
    session: NotRequired[OpenedSession | None]
    """
    The new session, now open (absent when cancelled).
    """


class InitializeResult(TypedDict):
    """
    The `initialize` result.
    """

    capabilities: Capabilities
    """
    What the server does beyond plain requests.
    """
    methods: list[str]
    """
    Every request method the client may call, sorted.
    """
    protocolVersion: str
    """
    [`PROTOCOL_VERSION`].
    """
    serverInfo: ServerInfo
    """
    Name and version of this program.
    """
    settings: ClientSettings
    """
    The settings in force, as the server understood them.
    """


class ListResult(TypedDict):
    sessions: list[SessionRow]
    """
    pi's `SessionInfo`s (path, id, cwd, name?, parentSessionPath?, created, modified, messageCount, firstMessage, allMessagesText), newest activity first; harness: its `SessionMetadata` (id, createdAt, cwd, path, parentSessionPath?, metadata?), newest `createdAt` first.
    """
    total: NotRequired[int | None]
    """
    How many rows matched before `offset`/`limit` were applied; present when any of `query`, `nameFilter`, `offset`, `limit` was given.
    """
    warnings: list[ListWarning]


class NavigateResult(TypedDict):
    cancelled: bool
    editorText: NotRequired[str | None]
    leafId: NotRequired[str | None]
    summaryEntry: NotRequired[BranchSummaryEntry]


class NewBranchSummaryEntry(TypedDict):
    """
    pi's `BranchSummaryEntry`.
    """

    details: NotRequired[ExtensionData | None]
    fromHook: NotRequired[bool | None]
    fromId: str
    """
    The entry navigated away from.
    """
    summary: str
    type: Literal['branch_summary']
    usage: NotRequired[SummaryUsage | None]


class NewCustomMessageEntry(TypedDict):
    """
    pi's `CustomMessageEntry`: an extension's message, part of the context.
    """

    content: UserContent
    customType: str
    details: NotRequired[ExtensionData | None]
    display: bool
    type: Literal['custom_message']


class NewUsageEntry(TypedDict):
    """
    pi 1.6 only: usage outside a message (e.g. `cache_warm`).
    """

    kind: str
    model: str
    note: NotRequired[str | None]
    provider: str
    type: Literal['usage']
    usage: Usage


class SummaryParam(TypedDict):
    """
    A branch summary written by someone with a model.
    """

    details: NotRequired[ExtensionData | None]
    summary: str
    usage: NotRequired[SummaryUsage | None]


class SummaryTextParam(TypedDict):
    """
    A model's answer to one of `session/prepareCompaction`'s requests (or to `branchSummary.request`): `text`, or the response's `content` blocks, and what pi checks before taking it.
    """

    content: NotRequired[list[AssistantContentBlock] | None]
    """
    The response's content blocks, as pi-ai returns them: the text is taken from them as pi takes it, and pi 1.6 refuses an answer holding a `toolCall` block.
    """
    errorMessage: NotRequired[str | None]
    """
    The response's `errorMessage`, quoted in the refusal of an `"error"` stop.
    """
    stopReason: NotRequired[str | None]
    """
    The response's `stopReason`: `"error"` is refused (pi 1.6 also refuses `"length"`, a cut-off summary; an `"aborted"` branch summary cancels the navigation).
    """
    text: NotRequired[str | None]
    """
    The answer's text (pi's `contentText(response.content)`: text blocks joined by "\\n"). Give this or `content`.
    """
    usage: NotRequired[SummaryUsage | None]
    """
    The response's usage, written as pi writes it (two are added as pi's `combineUsage`).
    """


class SystemMessage(TypedDict):
    """
    pi 1.6's `SystemMessage`: the system prompt and tools from this point on.
    """

    content: SystemContent
    role: Literal['system']
    sections: NotRequired[dict[str, Any] | None]
    """
    Named prompt sections; `null` removes one.
    """
    timestamp: float
    toolsAdded: NotRequired[list[Tool] | None]
    toolsRemoved: NotRequired[list[ToolReference] | None]


class ToolResultMessage(TypedDict):
    """
    pi-ai's `ToolResultMessage`.
    """

    addedToolNames: NotRequired[list[str] | None]
    """
    pi 1.6: tools that became available after this result.
    """
    content: list[UserContentBlock]
    details: NotRequired[ExtensionData | None]
    isError: bool
    role: Literal['toolResult']
    timestamp: float
    toolCallId: str
    toolName: str
    usage: NotRequired[Usage | None]


class TreeNotification(TypedDict):
    """
    The `session_tree` notification, sent after a navigation and before its response.
    """

    fromExtension: NotRequired[bool | None]
    newLeafId: NotRequired[str | None]
    oldLeafId: NotRequired[str | None]
    sessionId: str
    summaryEntry: NotRequired[BranchSummaryEntry]


class TreeParams(TypedDict):
    """
    `session/prepareTree` and `session/navigateTree`.
    """

    contextWindow: NotRequired[float | None]
    """
    The summarizing model's context window (pi's fallback when absent or 0: 128,000).
    """
    customInstructions: NotRequired[str | None]
    label: NotRequired[str | None]
    model: NotRequired[SummaryModelParam | None]
    """
    pi-1.6: the summarizing model (`reasoning`: the request then carries the thinking level).
    """
    modelSummary: NotRequired[SummaryTextParam | None]
    """
    The summarizing model's answer to `branchSummary.request` (`session/prepareTree`): written as pi's `generateBranchSummary` writes it (preamble, file lists, `details`).
    """
    replaceInstructions: NotRequired[bool | None]
    sessionId: str
    settings: NotRequired[CompactionSettingsParam | None]
    """
    `branchSummary.reserveTokens` (default 16384; the harness always uses 16384).
    """
    summarize: NotRequired[bool]
    summary: NotRequired[SummaryParam | None]
    """
    A ready summary of the abandoned branch (written by the caller's own model); used when `summarize` is set and no hook supplies one.
    """
    targetId: str
    thinkingLevel: NotRequired[str | None]
    """
    pi-1.6: the level passed as `reasoning`; defaults to the level in force at the leaf.
    """


class AssistantMessage(TypedDict):
    """
    pi-ai's `AssistantMessage`.
    """

    api: NotRequired[str | None]
    """
    The provider API (pi writes it; older files may lack it).
    """
    content: list[AssistantContentBlock]
    deferred: NotRequired[DeferredHandle | None]
    """
    pi 1.6: the handle of a deferred response.
    """
    diagnostics: NotRequired[list[AssistantMessageDiagnostic] | None]
    errorMessage: NotRequired[str | None]
    model: str
    provider: str
    providerThinkingLevel: NotRequired[str | None]
    """
    pi 1.6: the provider's own effort level.
    """
    responseId: NotRequired[str | None]
    responseModel: NotRequired[str | None]
    role: Literal['assistant']
    stopReason: StopReason
    thinkingLevel: NotRequired[str | None]
    """
    pi 1.6: the thinking level the agent loop asked for.
    """
    timestamp: float
    usage: NotRequired[Usage | None]
    """
    pi writes it always; a line written by hand or another program may lack it, and is answered as the file holds it.
    """


class BeforeTreeAnswer(TypedDict):
    """
    The `session_before_tree` hook's answer (every member optional).
    """

    cancel: NotRequired[bool]
    customInstructions: NotRequired[str | None]
    label: NotRequired[str | None]
    replaceInstructions: NotRequired[bool | None]
    summary: NotRequired[SummaryParam | None]


class SummariesParam(TypedDict):
    """
    The answers to the preparation's requests, by `purpose`.
    """

    history: NotRequired[SummaryTextParam | None]
    turnPrefix: NotRequired[SummaryTextParam | None]


AgentMessage: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | SystemMessage
)
"""
pi-agent-core's `AgentMessage` as pi-coding-agent extends it: a model message (user, assistant, toolResult; pi 1.6: system) or one of pi's own (bashExecution, custom, branchSummary, compactionSummary), discriminated on `role`. A role none of these has is answered as it is (see UnknownMessage).
"""


AnyMessage: TypeAlias = AgentMessage
"""
A message as the server answers it: one of `AgentMessage`, or a passthrough.
"""


class CompactParams(TypedDict):
    """
    `session/compact`: compact at the leaf as pi does, with the model's answers.
    """

    customInstructions: NotRequired[str | None]
    leafId: NotRequired[str | None]
    """
    The leaf the caller prepared at: if the leaf has moved since, nothing is written (`leaf_moved`).
    """
    reason: NotRequired[CompactReason | None]
    """
    Sent to the hook: `"manual"` (default), `"threshold"` or `"overflow"`.
    """
    sessionId: str
    settings: NotRequired[CompactionSettingsParam | None]
    summaries: NotRequired[SummariesParam | None]
    """
    The model's answers to the preparation's requests.
    """


class CompactionEntry(TypedDict):
    """
    pi's `CompactionEntry`.
    """

    details: NotRequired[ExtensionData | None]
    firstKeptEntryId: NotRequired[str | None]
    """
    The first entry kept after the summary (pi-cli writes it always; pi 1.6 may write `null`; the harness may leave it out).
    """
    fromHook: NotRequired[bool | None]
    """
    Written by an extension's `session_before_compact`.
    """
    id: str
    parentId: str | None
    """
    `null` for a root.
    """
    retainedTail: NotRequired[list[AnyMessage] | None]
    """
    harness only: the messages kept after the summary.
    """
    summary: str
    systemMessage: NotRequired[SystemMessage | None]
    """
    pi 1.6: the system prompt and tools at the compaction.
    """
    timestamp: str
    """
    ISO 8601.
    """
    tokensBefore: float
    type: Literal['compaction']
    usage: NotRequired[SummaryUsage | None]


class CompactionPreparation(TypedDict):
    """
    pi's `CompactionPreparation` (`session_before_compact`'s `preparation`).
    """

    fileOps: FileOperations
    firstKeptEntryId: NotRequired[str | None]
    isSplitTurn: bool
    messagesToSummarize: list[AnyMessage]
    previousSummary: NotRequired[str | None]
    retainedTail: NotRequired[list[AnyMessage] | None]
    """
    harness only.
    """
    settings: CompactionSettings
    tokensBefore: float
    turnPrefixMessages: list[AnyMessage]


class ContextDocument(TypedDict):
    """
    The shape of `session/buildContext`'s answer, `{messages, thinkingLevel, model}` (+ `activeToolNames` for harness), for the schema: the context is built as pi builds it (key order included) and travels as the JSON text `JSON.stringify` would write.
    """

    activeToolNames: NotRequired[list[str] | None]
    """
    harness only: the active tools at the leaf (`null` when never set).
    """
    messages: list[AnyMessage]
    """
    pi's agent messages (`format: agent`) or the messages sent to the model (`llm`).
    """
    model: NotRequired[ContextModel | None]
    thinkingLevel: str


class HookCompaction(TypedDict):
    """
    A compaction an extension wrote.
    """

    details: NotRequired[ExtensionData | None]
    firstKeptEntryId: NotRequired[str | None]
    retainedTail: NotRequired[list[AnyMessage] | None]
    summary: str
    tokensBefore: float
    usage: NotRequired[SummaryUsage | None]


class MessageEntry(TypedDict):
    """
    A message (pi's `SessionMessageEntry`).
    """

    id: str
    message: AnyMessage
    parentId: str | None
    """
    `null` for a root.
    """
    timestamp: str
    """
    ISO 8601.
    """
    type: Literal['message']


class NewCompactionEntry(TypedDict):
    """
    pi's `CompactionEntry`.
    """

    details: NotRequired[ExtensionData | None]
    firstKeptEntryId: NotRequired[str | None]
    """
    The first entry kept after the summary (pi-cli writes it always; pi 1.6 may write `null`; the harness may leave it out).
    """
    fromHook: NotRequired[bool | None]
    """
    Written by an extension's `session_before_compact`.
    """
    retainedTail: NotRequired[list[AnyMessage] | None]
    """
    harness only: the messages kept after the summary.
    """
    summary: str
    systemMessage: NotRequired[SystemMessage | None]
    """
    pi 1.6: the system prompt and tools at the compaction.
    """
    tokensBefore: float
    type: Literal['compaction']
    usage: NotRequired[SummaryUsage | None]


class NewMessageEntry(TypedDict):
    """
    A message (pi's `SessionMessageEntry`).
    """

    message: AnyMessage
    type: Literal['message']


SessionEntry: TypeAlias = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | ActiveToolsChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | LeafEntry
    | ContextEditEntry
    | UsageEntry
)
"""
An entry of a session file, discriminated on `type`: pi 0.82.1's kinds, the harness's (`active_tools_change`, `leaf`) and pi 1.6's (`context_edit`, `usage`). A kind none of these has is answered as it is (see UnknownEntry).
"""


class SummaryRequest(TypedDict):
    """
    A model request pi's `compact()` or `generateBranchSummary` would make: send it to the model, and give its answer's text back (`summaries`, `modelSummary`).
    """

    cacheRetention: Literal['none']
    maxTokens: NotRequired[float | None]
    """
    pi-cli and harness (pi 1.6 asks for no limit).
    """
    messages: list[AgentMessage]
    """
    pi 1.6: a system message, then the user message.
    """
    purpose: SummaryPurpose
    reasoning: NotRequired[str | None]
    """
    The thinking level, when the model reasons and it is not off.
    """
    systemPrompt: NotRequired[str | None]
    """
    pi-cli and harness (pi 1.6 sends the system prompt as the first message instead).
    """


AnyEntry: TypeAlias = SessionEntry
"""
An entry as the server answers it: one of `SessionEntry`, or a passthrough.
"""


class BeforeCompactAnswer(TypedDict):
    """
    The `session_before_compact` hook's answer.
    """

    cancel: NotRequired[bool]
    compaction: NotRequired[HookCompaction | None]
    """
    A whole compaction, stored as given with `fromHook: true`: `{summary, firstKeptEntryId?, tokensBefore, details?, usage?, retainedTail? (harness)}`.
    """


class BeforeCompactHook(TypedDict):
    """
    The `session_before_compact` hook's params (pi's payload).
    """

    branchEntries: list[AnyEntry]
    """
    The path to the leaf (pi-cli: the full path; harness: the truncated path).
    """
    customInstructions: NotRequired[str | None]
    preparation: CompactionPreparation
    """
    pi's preparation, as `session/prepareCompaction` gives it.
    """
    reason: NotRequired[CompactReason | None]
    """
    pi-cli only.
    """
    sessionId: str


class BranchSummaryPlan(TypedDict):
    """
    What pi's `generateBranchSummary` would be given (`branchSummary` of `session/prepareTree` and `session_before_tree`).
    """

    contextWindow: float
    fileListsText: str
    fileOps: FileOperations
    messages: list[AnyMessage]
    modifiedFiles: list[str]
    readFiles: list[str]
    request: SummaryRequest | None
    """
    `null`: nothing to send to a model.
    """
    reserveTokens: float
    tokenBudget: float
    totalTokens: float


ChangedNotification = TypedDict(
    'ChangedNotification',
    {
        'complete': bool,
        'cursor': str,
        'entries': list[AnyEntry],
        'entriesAdded': int,
        'from': str,
        'leafId': NotRequired[str | None],
        'sessionId': str,
    },
)


class CompactNotification(TypedDict):
    """
    The `session_compact` notification, sent after the entry is written and before the response.
    """

    compactionEntry: CompactionEntry
    fromExtension: bool
    """
    Whether the entry came from the hook.
    """
    sessionId: str


class CompactResult(TypedDict):
    cancelled: bool
    entry: NotRequired[CompactionEntry]
    """
    The compaction entry written, as stored.
    """
    leafId: NotRequired[str | None]


class CompactionPlanDocument(TypedDict):
    """
    The shape of `session/prepareCompaction`'s result (it travels as built, pi's key order).
    """

    entryIds: CompactionEntryIds
    """
    The entries behind each list: {history, turnPrefix, kept}.
    """
    fileListsText: str
    """
    What pi appends to the summary text (`formatFileOperations`).
    """
    modifiedFiles: list[str]
    preparation: CompactionPreparation
    """
    pi's preparation: firstKeptEntryId, messagesToSummarize, turnPrefixMessages, retainedTail (harness), isSplitTurn, tokensBefore, previousSummary?, fileOps {read, written, edited} (arrays in insertion order), settings.
    """
    previousCompactionId: NotRequired[str | None]
    readFiles: list[str]
    requests: list[SummaryRequest]
    """
    The requests pi's `compact()` makes, in order: {purpose: "history"|"turnPrefix", systemPrompt, messages: [{role: "user", content: [{type: "text", text}], timestamp}], maxTokens, reasoning?, cacheRetention: "none"}.
    """
    turnStartId: NotRequired[str | None]
    windowStartId: NotRequired[str | None]


class EntriesPage(TypedDict):
    cursor: str
    """
    The point after this page's last entry: `since` resumes there.
    """
    entries: list[AnyEntry]
    nextOffset: NotRequired[int | None]
    """
    The offset of the next page, or `null` at the end.
    """
    total: int


class EntriesResult(TypedDict):
    entries: list[AnyEntry]
    offset: NotRequired[int | None]
    """
    With `offset` or `limit`: the index of the first entry here in the whole answer.
    """
    total: NotRequired[int | None]
    """
    With `offset` or `limit` (`getBranch`, `buildContextEntries`): how many entries the whole answer has.
    """


NewEntry: TypeAlias = (
    NewMessageEntry
    | NewThinkingLevelChangeEntry
    | NewModelChangeEntry
    | NewActiveToolsChangeEntry
    | NewCompactionEntry
    | NewBranchSummaryEntry
    | NewCustomEntry
    | NewCustomMessageEntry
    | NewLabelEntry
    | NewSessionInfoEntry
    | NewLeafEntry
    | NewContextEditEntry
    | NewUsageEntry
)
"""
`session/append`'s `entry`: an entry's own members, without `id`, `parentId` and `timestamp` (the server gives them), discriminated on `type`.
"""


StoreChangedNotification = TypedDict(
    'StoreChangedNotification',
    {
        'cursor': str,
        'entries': list[AnyEntry],
        'from': int,
        'generation': int,
        'kind': FeedKind,
        'oldPath': NotRequired[str | None],
        'path': str,
        'sessionId': str,
        'to': int,
        'watchId': str,
    },
)


class TreePreparation(TypedDict):
    """
    pi's `TreePreparation` (`session_before_tree`'s `preparation`).
    """

    commonAncestorId: str | None
    customInstructions: NotRequired[str | None]
    entriesToSummarize: list[AnyEntry]
    """
    The entries of the branch left, oldest first.
    """
    label: NotRequired[str | None]
    oldLeafId: str | None
    replaceInstructions: NotRequired[bool | None]
    targetId: str
    userWantsSummary: bool


class AppendParams(TypedDict):
    """
    `session/append`: one new entry, as a child of the leaf.
    """

    entry: NewEntry
    """
    `{type, ...fields}` with pi's field names: `message` {message}, `model_change` {provider, modelId}, `thinking_level_change` {thinkingLevel}, `compaction` {summary, firstKeptEntryId? (null: pi-1.6), tokensBefore, details?, usage?, fromHook?, retainedTail? (harness)}, `custom` {customType, data?}, `custom_message` {customType, content, display?, details?}, `label` {targetId, label?}, `session_info` {name}, `active_tools_change` {activeToolNames} (harness), `context_edit` {targetId, replacement} (pi-1.6), `usage` {kind, provider, model, usage, note?} (pi-1.6).
    """
    sessionId: str


class BeforeTreeHook(TypedDict):
    """
    The `session_before_tree` hook's params.
    """

    branchSummary: NotRequired[BranchSummaryPlan | None]
    """
    As in `session/prepareTree` (an addition beside pi's `preparation`).
    """
    preparation: TreePreparation
    sessionId: str


class PrepareTreeResult(TypedDict):
    """
    `session/prepareTree`: what a navigation would abandon, without moving.
    """

    branchSummary: NotRequired[BranchSummaryPlan | None]
    """
    What pi's `generateBranchSummary` would be given (when a summary is wanted and something is abandoned): {contextWindow, reserveTokens, tokenBudget, messages, totalTokens, fileOps, readFiles, modifiedFiles, fileListsText, request (null: no model call)}.
    """
    noOp: bool
    """
    The target already is the leaf: navigating would do nothing.
    """
    preparation: NotRequired[TreePreparation | None]
    """
    pi's preparation: targetId, oldLeafId, commonAncestorId, entriesToSummarize, userWantsSummary, customInstructions?, replaceInstructions?, label?.
    """
