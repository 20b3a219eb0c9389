"""Quick start: a session, two messages, back to the question with a hook's summary."""
import asyncio

from pi_session import Client, assistant_message, user_message
from pi_session.schema import BeforeTreeAnswer, BeforeTreeHook


async def summarize(hook: BeforeTreeHook) -> BeforeTreeAnswer:  # an extension's hook
    return {"summary": {"summary": f"{len(hook['preparation']['entriesToSummarize'])} left"}}


async def main() -> None:
    async with Client() as client:  # $PI_SESSION_BIN, or pi-session on PATH
        client.hooks.session_before_tree(summarize)  # hooks come before initialize
        await client.initialize()
        sid = (await client.session.create(cwd="/tmp/demo", in_memory=True))["sessionId"]
        asked = await client.session.append(session_id=sid, entry=user_message("2+2?"))
        await client.session.append(
            session_id=sid, entry=assistant_message("4", provider="p", model="m")
        )
        async with asyncio.timeout(5):  # when late: cancelled, $/cancelRequest sent
            moved = await client.session.navigate_tree(
                session_id=sid, target_id=asked["entryId"], summarize=True
            )
        print(moved["editorText"], "/", moved["summaryEntry"]["summary"])


asyncio.run(main())
