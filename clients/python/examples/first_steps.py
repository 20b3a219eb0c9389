import asyncio, os
from pi_session import Client, assistant_message, user_message
from pi_session.schema import BeforeTreeAnswer, BeforeTreeHook

async def summarize(hook: BeforeTreeHook) -> BeforeTreeAnswer:  # the summary of the branch left behind
    return {"summary": {"summary": "Asked 2+2, got 4."}}

async def main() -> None:
    async with Client() as pi:  # the binary pip installed ($PI_SESSION_BIN overrides)
        pi.hooks.session_before_tree(summarize)
        await pi.initialize()
        sid = (await pi.session.create(cwd=os.getcwd(), in_memory=True))["sessionId"]
        asked = await pi.session.append(session_id=sid, entry=user_message("What is 2+2?"))
        answer = assistant_message("4", provider="anthropic", model="claude-sonnet-4-5")
        await pi.session.append(session_id=sid, entry=answer)
        back = await pi.session.navigate_tree(session_id=sid, target_id=asked["entryId"], summarize=True)
        print(back["editorText"], "|", back["summaryEntry"]["summary"])

asyncio.run(main())
