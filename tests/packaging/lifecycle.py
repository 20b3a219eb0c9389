"""A front-end's whole lifecycle through the installed wheel `pi-session` (run by
tests/packaging.rs in a fresh venv, on the binary the wheel put in its scripts folder): hooks,
navigation with a summary, compaction, fork, listing, errors, a server that dies."""
import asyncio
import os
import sysconfig
import tempfile

import pi_session
from pi_session import (
    Client,
    ConnectionClosed,
    RpcError,
    assistant_message,
    custom_entry,
    label_entry,
    schema,
    tool_result_message,
    user_message,
)


async def on_tree(hook: schema.BeforeTreeHook) -> schema.BeforeTreeAnswer:
    left = len(hook["preparation"]["entriesToSummarize"])
    return {"summary": {"summary": f"{left} entries left behind"}}


async def on_compact(hook: schema.BeforeCompactHook) -> schema.BeforeCompactAnswer:
    preparation = hook["preparation"]
    return {"compaction": {"summary": "Compacted by the front-end.",
                           "firstKeptEntryId": preparation["firstKeptEntryId"],
                           "tokensBefore": preparation["tokensBefore"]}}


async def on_fork(hook: schema.BeforeForkHook) -> schema.BeforeForkAnswer:
    return {}


async def main(root: str) -> None:
    cwd = os.path.join(root, "project")
    binary = pi_session.find_binary()
    print("binary from the scripts folder:", os.path.dirname(binary) == sysconfig.get_path("scripts"))
    events: list[str] = []
    async with Client() as client:
        client.hooks.session_before_tree(on_tree)
        client.hooks.session_before_compact(on_compact)
        client.hooks.session_before_fork(on_fork)
        client.notifications.session_tree(
            lambda event: events.append(f"tree fromExtension={event['fromExtension']}"))
        client.notifications.session_compact(
            lambda event: events.append(f"compact fromExtension={event['fromExtension']}"))
        init = await client.initialize(sessions_root=os.path.join(root, "sessions"),
                                       deterministic=True)
        print("protocol:", init["protocolVersion"])
        created = await client.session.create(cwd=cwd)
        sid = created["sessionId"]

        # No type of its own: the builders make the generated types append takes (mypy
        # --strict checks this file: clients/python/pyproject.toml).
        async def append(entry: schema.NewEntry) -> str:
            return (await client.session.append(session_id=sid, entry=entry))["entryId"]

        def answer(content: str | list[schema.AssistantContentBlock],
                   timestamp: int) -> schema.NewEntry:
            return assistant_message(content, provider="anthropic", model="claude-sonnet-4-5",
                                     timestamp=timestamp)

        question = await append(user_message("Read notes.txt", timestamp=1))
        await append(answer([{"type": "toolCall", "id": "call_1", "name": "read",
                              "arguments": {"path": "notes.txt"}}], 2))
        await append(tool_result_message("call_1", "read", "buy milk", timestamp=3))
        await append(answer("One item: milk.", 4))
        await append(user_message("And in French?", timestamp=5))
        await append(answer("Du lait.", 6))
        await append(label_entry(question, "start"))
        await append(custom_entry("front-end-state", {"tab": 2}))

        compacted = await client.session.compact(
            session_id=sid, settings={"compaction": {"keepRecentTokens": 8}})
        print("compacted:", compacted["entry"]["summary"], "fromHook",
              str(compacted["entry"]["fromHook"]).lower())
        moved = await client.session.navigate_tree(session_id=sid, target_id=question,
                                                   summarize=True)
        print("navigated:", moved["editorText"], "/", moved["summaryEntry"]["summary"])
        await append(answer("Again: milk.", 7))
        fork = await client.session.fork(session_id=sid, entry_id=question, position="at")
        forked = fork["session"]
        print("forked:", str(fork["cancelled"] is False and forked is not None
                             and forked["header"]["parentSession"] == created["path"]).lower())
        listed = await client.session.list(cwd=cwd)
        print("listed:", len(listed["sessions"]), "sessions")
        print("events:", ", ".join(events))
        try:
            await client.session.get_info(session_id="no-such-session")
        except RpcError as error:
            print("error:", "true", error.kind)
    print("exit:", client.returncode)

    # A server that cannot start says why: its exit status and its own last words.
    broken = Client(args=["--stdio", "--no-such-flag"])
    try:
        async with broken:
            await broken.initialize()
    except ConnectionClosed as error:
        first, *rest = str(error).split("\n")
        print("died:", first)
        print("its stderr quoted:", str(any("--no-such-flag" in line for line in rest)).lower())


with tempfile.TemporaryDirectory(prefix="pi-session-pip-") as folder:
    asyncio.run(main(folder))
