# Generated from protocol/schema.json by clients/python/tools/generate.py; do not edit.
# Regenerate with:
#   UPDATE_PYTHON_CLIENT=1 cargo test --test python_client
"""The typed method, hook and notification tables of the protocol."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Unpack, cast

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
    CompactNotification,
    CompactParams,
    CompactResult,
    CompactionPlanDocument,
    ContextDocument,
    ContextEntriesParams,
    ContextParams,
    ContextUsageParams,
    ContextUsageResult,
    ContinueRecentParams,
    CreateParams,
    DeleteParams,
    DeleteResult,
    Empty,
    EntriesPage,
    EntriesParams,
    EntriesResult,
    EntryParams,
    ExportParams,
    ExportResult,
    FindByIdParams,
    FindByIdResult,
    ForkFromParams,
    ForkParams,
    ForkResult,
    GetTreeParams,
    InfoResult,
    LeafResult,
    ListAllParams,
    ListParams,
    ListResult,
    NavigateResult,
    OpenParams,
    OpenedSession,
    PrepareCompactionParams,
    PrepareTreeResult,
    SessionRef,
    TreeNotification,
    TreeParams,
    TreeResult,
    UnwatchResult,
    WatchEndedNotification,
    WatchResult,
)

PROTOCOL_TITLE = "pi-session protocol 0.7"
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
    "session/unwatch",
    "session/watch",
    "shutdown",
)
HOOKS = ("session_before_compact", "session_before_fork", "session_before_tree")
NOTIFICATIONS = (
    "$/cancelRequest",
    "session_changed",
    "session_compact",
    "session_tree",
    "session_watch_ended",
)
CLIENT_NOTIFICATIONS = ("$/cancelRequest", "exit", "initialized")


class SessionMethods:
    """The `session/...` requests, typed."""

    def __init__(self, client: Requests) -> None:
        self._client = client

    async def create(self, **params: Unpack[CreateParams]) -> OpenedSession:
        """`session/create`: a new session."""
        return cast(
            "OpenedSession", await self._client.request("session/create", params)
        )

    async def open(self, **params: Unpack[OpenParams]) -> OpenedSession:
        """`session/open`: an existing file, for reading and appending."""
        return cast("OpenedSession", await self._client.request("session/open", params))

    async def continue_recent(
        self, **params: Unpack[ContinueRecentParams]
    ) -> OpenedSession:
        """`session/continueRecent`: pi's `--continue`."""
        return cast(
            "OpenedSession",
            await self._client.request("session/continueRecent", params),
        )

    async def fork_from(self, **params: Unpack[ForkFromParams]) -> OpenedSession:
        """`session/forkFrom`: pi's `--fork`, a whole session copied into another project."""
        return cast(
            "OpenedSession", await self._client.request("session/forkFrom", params)
        )

    async def list(self, **params: Unpack[ListParams]) -> ListResult:
        """`session/list`: the sessions of a cwd, as the profile's pi lists them (pi's `/resume` list, or the harness's `JsonlSessionRepo.list({cwd})`)."""
        return cast("ListResult", await self._client.request("session/list", params))

    async def list_all(self, **params: Unpack[ListAllParams]) -> ListResult:
        """`session/listAll`: every project's sessions."""
        return cast("ListResult", await self._client.request("session/listAll", params))

    async def find_by_id(self, **params: Unpack[FindByIdParams]) -> FindByIdResult:
        """`session/findById`: pi 1.6's `SessionManager.findById`, the file of an exact session id."""
        return cast(
            "FindByIdResult", await self._client.request("session/findById", params)
        )

    async def delete(self, **params: Unpack[DeleteParams]) -> DeleteResult:
        """`session/delete`: a session file and its listing cache row."""
        return cast(
            "DeleteResult", await self._client.request("session/delete", params)
        )

    async def close(self, **params: Unpack[SessionRef]) -> Empty:
        """`session/close`: see protocol/protocol.md."""
        return cast("Empty", await self._client.request("session/close", params))

    async def watch(self, **params: Unpack[SessionRef]) -> WatchResult:
        """`session/watch`: see protocol/protocol.md."""
        return cast("WatchResult", await self._client.request("session/watch", params))

    async def unwatch(self, **params: Unpack[SessionRef]) -> UnwatchResult:
        """`session/unwatch`: see protocol/protocol.md."""
        return cast(
            "UnwatchResult", await self._client.request("session/unwatch", params)
        )

    async def append(self, **params: Unpack[AppendParams]) -> AppendResult:
        """`session/append`: one new entry, as a child of the leaf."""
        return cast(
            "AppendResult", await self._client.request("session/append", params)
        )

    async def branch(self, **params: Unpack[BranchParams]) -> LeafResult:
        """`session/branch`: move the leaf to an entry."""
        return cast("LeafResult", await self._client.request("session/branch", params))

    async def reset_leaf(self, **params: Unpack[SessionRef]) -> LeafResult:
        """`session/resetLeaf`: see protocol/protocol.md."""
        return cast(
            "LeafResult", await self._client.request("session/resetLeaf", params)
        )

    async def branch_with_summary(
        self, **params: Unpack[BranchWithSummaryParams]
    ) -> LeafResult:
        """`session/branchWithSummary`: move the leaf and attach a branch summary there."""
        return cast(
            "LeafResult",
            await self._client.request("session/branchWithSummary", params),
        )

    async def prepare_tree(self, **params: Unpack[TreeParams]) -> PrepareTreeResult:
        """`session/prepareTree` and `session/navigateTree`."""
        return cast(
            "PrepareTreeResult",
            await self._client.request("session/prepareTree", params),
        )

    async def navigate_tree(self, **params: Unpack[TreeParams]) -> NavigateResult:
        """`session/prepareTree` and `session/navigateTree`."""
        return cast(
            "NavigateResult", await self._client.request("session/navigateTree", params)
        )

    async def fork(self, **params: Unpack[ForkParams]) -> ForkResult:
        """`session/fork`: a new session from the path before a user message (`before`, pi's `/fork`) or up to an entry (`at`, pi's `/clone`)."""
        return cast("ForkResult", await self._client.request("session/fork", params))

    async def export(self, **params: Unpack[ExportParams]) -> ExportResult:
        """`session/export`: the session as a self-contained HTML page, a Markdown document of one path, or one branch as a new session file (`pi-session export`)."""
        return cast(
            "ExportResult", await self._client.request("session/export", params)
        )

    async def build_context(self, **params: Unpack[ContextParams]) -> ContextDocument:
        """`session/buildContext` and `session/buildContextEntries`."""
        return cast(
            "ContextDocument",
            await self._client.request("session/buildContext", params),
        )

    async def build_context_entries(
        self, **params: Unpack[ContextEntriesParams]
    ) -> EntriesResult:
        """`session/buildContextEntries`."""
        return cast(
            "EntriesResult",
            await self._client.request("session/buildContextEntries", params),
        )

    async def get_tree(self, **params: Unpack[GetTreeParams]) -> TreeResult:
        """`session/getTree`: the whole tree, or a page or window of it, as pi's selector filters it."""
        return cast("TreeResult", await self._client.request("session/getTree", params))

    async def get_entry(self, **params: Unpack[EntryParams]) -> AnyEntry:
        """`session/getEntry` and `session/getChildren`."""
        return cast("AnyEntry", await self._client.request("session/getEntry", params))

    async def get_entries(self, **params: Unpack[EntriesParams]) -> EntriesPage:
        """`session/getEntries`: entries in file order, a page at a time."""
        return cast(
            "EntriesPage", await self._client.request("session/getEntries", params)
        )

    async def get_children(self, **params: Unpack[EntryParams]) -> EntriesResult:
        """`session/getEntry` and `session/getChildren`."""
        return cast(
            "EntriesResult", await self._client.request("session/getChildren", params)
        )

    async def get_branch(self, **params: Unpack[BranchPathParams]) -> EntriesResult:
        """`session/getBranch`: the path to an entry (the leaf by default)."""
        return cast(
            "EntriesResult", await self._client.request("session/getBranch", params)
        )

    async def get_info(self, **params: Unpack[SessionRef]) -> InfoResult:
        """`session/getInfo`: see protocol/protocol.md."""
        return cast("InfoResult", await self._client.request("session/getInfo", params))

    async def get_context_usage(
        self, **params: Unpack[ContextUsageParams]
    ) -> ContextUsageResult:
        """`session/getContextUsage`: pi's context-size figures at the leaf (or `leafId`)."""
        return cast(
            "ContextUsageResult",
            await self._client.request("session/getContextUsage", params),
        )

    async def prepare_compaction(
        self, **params: Unpack[PrepareCompactionParams]
    ) -> CompactionPlanDocument:
        """`session/prepareCompaction`: what pi would summarize if it compacted now."""
        return cast(
            "CompactionPlanDocument",
            await self._client.request("session/prepareCompaction", params),
        )

    async def compact(self, **params: Unpack[CompactParams]) -> CompactResult:
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
