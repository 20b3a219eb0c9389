"""Whole sessions against the real binary: lifecycle, the typed methods, hooks (a summary, a
veto, a timeout, a failing handler), notifications, errors, cancellation and closing."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from typing import NamedTuple

import pytest
from scenario import two_turns, user

import pi_session
from pi_session import CancelledWithResult, Client, ConnectionClosed, RpcError, schema

LIMIT = 10.0  # seconds any single step may take before the test fails instead of hanging


async def test_initialize_declares_the_hooks_and_the_client_knows_every_method(
    client: Client,
) -> None:
    async def nothing(params: schema.BeforeTreeHook) -> schema.BeforeTreeAnswer | None:
        return None

    client.hooks.session_before_tree(nothing)
    result = await client.initialize(clientInfo={"name": "pytest"})
    assert result["settings"]["hooks"] == ["session_before_tree"]
    assert result["settings"]["processId"] == os.getpid()
    assert result["settings"]["framing"] == "lsp"
    # The generated tables cover exactly what this server offers.
    assert sorted(result["methods"]) == sorted(pi_session.METHODS)
    assert sorted(result["capabilities"]["hooks"]) == sorted(pi_session.HOOKS)
    assert "pi-1.6" in result["capabilities"]["profiles"]
    with pytest.raises(RuntimeError, match="before it"):
        client.hooks.session_before_fork(lambda params: asyncio.sleep(0))
    assert await client.aclose() == 0  # shutdown was sent: exit status 0


async def test_create_append_context_tree_and_reads(client: Client) -> None:
    await client.initialize(deterministic=True)
    session, ids = await two_turns(client)
    info = await client.session.get_info(sessionId=session)
    assert info["leafId"] == ids[-1]
    context = await client.session.build_context(sessionId=session, format="llm")
    assert [m["role"] for m in context["messages"]] == ["user", "assistant"] * 2
    tree = await client.session.get_tree(sessionId=session)
    assert len(tree["rows"]) == 4
    branch = await client.session.get_branch(sessionId=session, entryId=ids[1])
    assert [e["id"] for e in branch["entries"]] == ids[:2]
    moved = await client.session.branch(sessionId=session, entryId=ids[1])
    assert moved["leafId"] == ids[1]
    assert await client.session.close(sessionId=session) == {}
    with pytest.raises(RpcError) as gone:
        await client.session.get_info(sessionId=session)
    assert gone.value.kind == "session_not_found"


async def test_navigate_with_a_hook_summary_notifies_before_answering(client: Client) -> None:
    seen: list[schema.TreeNotification] = []
    hook_params: list[schema.BeforeTreeHook] = []

    async def summarize(params: schema.BeforeTreeHook) -> schema.BeforeTreeAnswer:
        hook_params.append(params)
        # A hook may read the session before answering: the navigation has not moved it.
        info = await client.session.get_info(sessionId=params["sessionId"])
        return {"summary": {"summary": f"left behind from {info['leafId']}"}, "label": "back"}

    client.hooks.session_before_tree(summarize)
    client.notifications.session_tree(seen.append)
    await client.initialize(deterministic=True)
    session, ids = await two_turns(client)
    moved = await asyncio.wait_for(
        client.session.navigate_tree(sessionId=session, targetId=ids[2], summarize=True), LIMIT
    )
    assert moved["cancelled"] is False
    assert moved["editorText"] == "two"
    summary = moved["summaryEntry"]
    assert summary["summary"] == f"left behind from {ids[3]}"
    assert summary["fromHook"] is True
    assert hook_params[0]["preparation"]["targetId"] == ids[2]
    # The notification reached its callback before the answer was delivered.
    assert len(seen) == 1
    assert seen[0]["newLeafId"] == moved["leafId"]
    assert seen[0]["oldLeafId"] == ids[3]
    assert seen[0].get("fromExtension") is True


async def test_a_hook_veto_moves_nothing_and_notifies_nothing(client: Client) -> None:
    seen: list[schema.TreeNotification] = []

    async def veto(params: schema.BeforeTreeHook) -> schema.BeforeTreeAnswer:
        return {"cancel": True}

    client.hooks.session_before_tree(veto)
    client.notifications.session_tree(seen.append)
    await client.initialize()
    session, ids = await two_turns(client)
    moved = await client.session.navigate_tree(sessionId=session, targetId=ids[0])
    assert moved["cancelled"] is True
    assert (await client.session.get_info(sessionId=session))["leafId"] == ids[3]
    assert seen == []


async def test_fork_asks_its_hook_and_a_veto_writes_nothing(client: Client, tmp_path: object) -> None:
    answers: list[schema.BeforeForkAnswer] = [{"cancel": True}, {}]
    asked: list[schema.BeforeForkHook] = []

    async def decide(params: schema.BeforeForkHook) -> schema.BeforeForkAnswer:
        asked.append(params)
        return answers[len(asked) - 1]

    client.hooks.session_before_fork(decide)
    await client.initialize(deterministic=True)
    session, ids = await two_turns(client)
    vetoed = await client.session.fork(sessionId=session, entryId=ids[2])
    assert vetoed == {"cancelled": True}
    forked = await client.session.fork(sessionId=session, entryId=ids[2])
    assert forked["cancelled"] is False
    assert forked.get("selectedText") == "two"
    new = forked.get("session")
    assert new is not None
    assert new["sessionId"] != session and new["leafId"] == ids[1]
    assert [p["position"] for p in asked] == ["before", "before"]
    context = await client.session.build_context(sessionId=new["sessionId"])
    assert [m["content"] for m in context["messages"] if m["role"] == "user"][0] == "one"


async def test_compaction_by_the_hook_is_written_and_notified(client: Client) -> None:
    seen: list[schema.CompactNotification] = []

    async def compact(params: schema.BeforeCompactHook) -> schema.BeforeCompactAnswer:
        preparation = params["preparation"]
        return {
            "compaction": {
                "summary": "The user counted.",
                "firstKeptEntryId": preparation["firstKeptEntryId"],
                "tokensBefore": preparation["tokensBefore"],
            }
        }

    client.hooks.session_before_compact(compact)
    client.notifications.session_compact(seen.append)
    await client.initialize(deterministic=True)
    session, ids = await two_turns(client)
    settings: schema.CompactionSettingsParam = {"compaction": {"keepRecentTokens": 1}}
    plan = await client.session.prepare_compaction(sessionId=session, settings=settings)
    done = await client.session.compact(sessionId=session, leafId=ids[3], settings=settings)
    assert done["cancelled"] is False
    entry = done["entry"]
    assert entry["summary"] == "The user counted." and entry["fromHook"] is True
    assert entry["firstKeptEntryId"] == plan["preparation"]["firstKeptEntryId"]
    assert [n["compactionEntry"]["id"] for n in seen] == [entry["id"]]
    assert seen[0]["fromExtension"] is True
    with pytest.raises(RpcError) as again:
        await client.session.compact(sessionId=session, settings=settings)
    assert again.value.kind == "already_compacted"


async def test_errors_carry_code_and_kind(client: Client) -> None:
    with pytest.raises(RpcError) as before:
        await client.session.get_info(sessionId="x")
    assert before.value.code == -32002 and before.value.kind is None
    await client.initialize()
    with pytest.raises(RpcError) as missing:
        await client.session.get_info(sessionId="no-such-session")
    assert (missing.value.code, missing.value.kind) == (1004, "session_not_found")
    assert "no-such-session" in missing.value.message
    session, _ = await two_turns(client)
    with pytest.raises(RpcError) as no_entry:
        await client.session.branch(sessionId=session, entryId="nope")
    assert no_entry.value.kind == "entry_not_found"
    with pytest.raises(RpcError) as bad:
        await client.session.append(sessionId=session)  # type: ignore[call-overload]
    assert bad.value.code == -32602 and "entry" in bad.value.message
    with pytest.raises(RpcError) as unknown:
        await client.request("session/teleport", {})
    assert unknown.value.code == -32601


async def test_cancelling_the_awaiting_task_cancels_the_request_and_its_hook(
    client: Client,
) -> None:
    held = await navigation_held_by_a_hook(client)
    held.navigation.cancel()
    with pytest.raises(asyncio.CancelledError):
        await held.navigation
    # The server stops waiting for the hook and says so: the handler is cancelled.
    await asyncio.wait_for(held.hook_cancelled.wait(), LIMIT)
    # -32800 means nothing changed; the connection goes on.
    assert (await client.session.get_info(sessionId=held.session))["leafId"] == held.ids[3]


async def test_a_change_cancelled_after_it_started_ends_cancelled_with_its_result(
    client: Client,
) -> None:
    await client.initialize()
    session, ids = await two_turns(client)
    # Cancelled once the server has answered but before the awaiting task has resumed: the
    # change happened, so the task must end cancelled and carry the answer.
    seen: list[asyncio.CancelledError] = []

    async def append_one() -> schema.AppendResult:
        try:
            return await client.session.append(session_id=session, entry=user("late", 9))
        except asyncio.CancelledError as cancelled:
            seen.append(cancelled)
            raise

    append = asyncio.create_task(append_one())
    while not client._pending:
        await asyncio.sleep(0)
    (answer,) = client._pending.values()
    while not answer.done():
        await asyncio.sleep(0)
    append.cancel()
    with pytest.raises(asyncio.CancelledError):
        await append
    assert append.cancelled()  # asyncio's contract: the task ends cancelled
    # From Python 3.12 a subclass; 3.11's asyncio.timeout recognises only CancelledError itself.
    assert isinstance(seen[0], CancelledWithResult) == (sys.version_info >= (3, 12))
    made = seen[0].result  # type: ignore[attr-defined]
    info = await client.session.get_info(sessionId=session)
    assert info["leafId"] == made["entryId"] and made["entryId"] not in ids
    # asyncio.timeout turns it into TimeoutError, as for any cancellation.
    with pytest.raises(TimeoutError) as timed_out:
        async with asyncio.timeout(0.001):
            await client.session.append(session_id=session, entry=user("y" * 8_000_000, 10))
    cause = timed_out.value.__cause__
    assert isinstance(cause, asyncio.CancelledError)
    after = await client.session.get_info(sessionId=session)
    # Whether that change happened is told by the cancellation it carries.
    if after["leafId"] != made["entryId"]:
        assert cause.result["entryId"] == after["leafId"]  # type: ignore[attr-defined]
    else:
        assert not hasattr(cause, "result")


async def test_a_timed_out_hook_is_cancelled_and_the_method_goes_on(client: Client) -> None:
    cancelled = asyncio.Event()

    async def slow(params: schema.BeforeTreeHook) -> schema.BeforeTreeAnswer:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"cancel": True}

    client.hooks.session_before_tree(slow)
    await client.initialize(hookTimeoutMs=100)
    session, ids = await two_turns(client)
    started = time.monotonic()
    moved = await asyncio.wait_for(
        client.session.navigate_tree(sessionId=session, targetId=ids[2]), LIMIT
    )
    assert time.monotonic() - started >= 0.1
    assert moved["cancelled"] is False and moved["leafId"] == ids[1]
    assert cancelled.is_set()


async def test_a_failing_handler_or_callback_counts_as_no_answer(client: Client) -> None:
    calls = 0

    async def broken(params: schema.BeforeTreeHook) -> schema.BeforeTreeAnswer:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ValueError("the extension crashed")
        return {"label": object()}  # type: ignore[typeddict-item]  # not JSON

    def broken_callback(params: schema.TreeNotification) -> None:
        raise RuntimeError("so did the listener")

    client.hooks.session_before_tree(broken)
    client.notifications.session_tree(broken_callback)
    # The error answers are sent at once: nothing waits for the hook timeout.
    await client.initialize(hookTimeoutMs=60_000)
    session, ids = await two_turns(client)
    for target, leaf in [(ids[2], ids[1]), (ids[0], None)]:
        moved = await asyncio.wait_for(
            client.session.navigate_tree(sessionId=session, targetId=target), LIMIT
        )
        assert moved["cancelled"] is False and moved["leafId"] == leaf
    assert calls == 2


async def test_many_pipelined_requests_are_answered_in_order(client: Client) -> None:
    await client.initialize(deterministic=True)
    opened = await client.session.create(cwd="/tmp/pi-session-py", inMemory=True)
    session = opened["sessionId"]
    big = "x" * 2_000
    started = time.monotonic()
    results = await asyncio.wait_for(
        asyncio.gather(
            *(
                client.session.append(sessionId=session, entry=user(f"{i} {big}", i))
                for i in range(2_000)
            )
        ),
        60,
    )
    elapsed = time.monotonic() - started
    # Changes to one session answer in arrival order: each entry's parent is the one before.
    branch = await client.session.get_branch(sessionId=session)
    assert [e["id"] for e in branch["entries"]] == [r["entryId"] for r in results]
    print(f"2,000 pipelined 2 KB appends: {elapsed:.2f} s")


class HeldNavigation(NamedTuple):
    session: str
    ids: list[str]
    navigation: asyncio.Task[schema.NavigateResult]
    hook_cancelled: asyncio.Event


async def navigation_held_by_a_hook(client: Client) -> HeldNavigation:
    """A session of two turns whose navigation to the first entry waits on a
    `session_before_tree` handler that never answers (the server's hook timeout is a minute),
    once the handler has started; `hook_cancelled` is set when its task is cancelled."""
    started = asyncio.Event()
    hook_cancelled = asyncio.Event()

    async def hang(params: schema.BeforeTreeHook) -> schema.BeforeTreeAnswer:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            hook_cancelled.set()
            raise
        return {}

    client.hooks.session_before_tree(hang)
    await client.initialize(hook_timeout_ms=60_000)
    session, ids = await two_turns(client)
    navigation = asyncio.create_task(
        client.session.navigate_tree(session_id=session, target_id=ids[0])
    )
    await asyncio.wait_for(started.wait(), LIMIT)
    return HeldNavigation(session, ids, navigation, hook_cancelled)


async def test_the_server_dying_fails_what_waits(client: Client) -> None:
    session, _, navigation, _ = await navigation_held_by_a_hook(client)
    assert client.pid is not None
    os.kill(client.pid, signal.SIGKILL)
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(navigation, LIMIT)
    with pytest.raises(ConnectionClosed):
        await client.session.get_info(sessionId=session)
    assert await client.aclose() == -signal.SIGKILL


async def test_aclose_does_not_wait_for_a_hook_that_never_answers(client: Client) -> None:
    navigation = (await navigation_held_by_a_hook(client)).navigation
    began = time.monotonic()
    # shutdown waits for the navigation, which waits for the hook: after 0.5 s, exit ends it.
    assert await client.aclose(timeout=0.5) == 0
    assert time.monotonic() - began < 5
    # The server answered it (without the hook) before exiting, and the answer was read.
    assert await navigation == {"cancelled": False, "editorText": "one", "leafId": None}


async def test_aclose_kills_a_server_that_does_not_exit() -> None:
    # A "server" that never reads nor exits: aclose must not hang.
    client = Client("sleep", args=["60"])
    await client.start()
    started = time.monotonic()
    status = await client.aclose(timeout=0.3)
    assert status == -signal.SIGKILL
    assert time.monotonic() - started < 3


async def test_the_binary_is_found_from_the_argument_the_environment_or_path(
    monkeypatch: pytest.MonkeyPatch, binary: str
) -> None:
    monkeypatch.setenv("PI_SESSION_BIN", binary)
    assert pi_session.find_binary("/explicit") == "/explicit"
    assert pi_session.find_binary() == binary
    monkeypatch.delenv("PI_SESSION_BIN")
    monkeypatch.setenv("PATH", os.path.dirname(binary))
    assert pi_session.find_binary() == binary
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(FileNotFoundError, match="PI_SESSION_BIN"):
        pi_session.find_binary()


async def test_declaring_a_hook_without_a_handler_is_refused(client: Client) -> None:
    with pytest.raises(ValueError, match="session_before_fork"):
        await client.initialize(hooks=["session_before_fork"])
    # initialize may be retried after an error.
    result = await client.initialize()
    assert result["settings"]["hooks"] == []
    session, ids = await two_turns(client)
    # No hook declared: none is sent, the navigation goes on.
    assert (await client.session.navigate_tree(sessionId=session, targetId=ids[2]))["leafId"] == ids[1]
