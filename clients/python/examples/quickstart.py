"""A session from Python: two messages, then back to the question with a hook's summary."""
import asyncio

from pi_session import Client
from pi_session.schema import BeforeTreeAnswer, BeforeTreeHook


async def summarize(hook: BeforeTreeHook) -> BeforeTreeAnswer:
    left = len(hook["preparation"]["entriesToSummarize"])
    return {"summary": {"summary": f"Left {left} entry behind."}}


async def main() -> None:
    async with Client() as client:  # $PI_SESSION_BIN, or pi-session on PATH
        client.hooks.session_before_tree(summarize)  # hooks before initialize
        await client.initialize(deterministic=True)
        session = (await client.session.create(cwd="/tmp/demo", inMemory=True))["sessionId"]

        async def say(role: str, text: str) -> str:
            message = {"role": role, "content": text, "timestamp": 1}
            entry = {"type": "message", "message": message}
            return (await client.session.append(sessionId=session, entry=entry))["entryId"]

        question = await say("user", "What is 2+2?")
        await say("assistant", "4")
        moved = await client.session.navigate_tree(
            sessionId=session, targetId=question, summarize=True
        )
        print(moved["editorText"], "/", moved["summaryEntry"]["summary"])


asyncio.run(main())
