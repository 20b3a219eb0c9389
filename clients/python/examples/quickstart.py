"""Quick start: a session, two messages, back to the question with a hook's summary."""
import asyncio

from pi_session import Client
from pi_session.schema import BeforeTreeAnswer, BeforeTreeHook, NewMessageEntry


def user(text: str) -> NewMessageEntry:
    return {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}}


def reply(text: str) -> NewMessageEntry:
    return {
        "type": "message",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                    "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 2},
    }


async def summarize(hook: BeforeTreeHook) -> BeforeTreeAnswer:  # an extension's hook
    return {"summary": {"summary": f"{len(hook['preparation']['entriesToSummarize'])} left"}}


async def main() -> None:
    async with Client() as client:  # $PI_SESSION_BIN, or pi-session on PATH
        client.hooks.session_before_tree(summarize)  # hooks come before initialize
        await client.initialize()
        sid = (await client.session.create(cwd="/tmp/demo", inMemory=True))["sessionId"]
        asked = await client.session.append(sessionId=sid, entry=user("2+2?"))
        await client.session.append(sessionId=sid, entry=reply("4"))
        async with asyncio.timeout(5):  # when late: cancelled, $/cancelRequest sent
            moved = await client.session.navigate_tree(
                sessionId=sid, targetId=asked["entryId"], summarize=True
            )
        print(moved["editorText"], "/", moved["summaryEntry"]["summary"])


asyncio.run(main())
