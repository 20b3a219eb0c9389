"""Builders shared by the scenario tests."""

from __future__ import annotations

from typing import Any

from pi_session import Client
from pi_session.schema import NewMessageEntry


def user(text: str, timestamp: int = 1) -> NewMessageEntry:
    return {"type": "message", "message": {"role": "user", "content": text, "timestamp": timestamp}}


def assistant(text: str, timestamp: int = 2) -> NewMessageEntry:
    return {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "provider": "p",
            "model": "m",
            "stopReason": "stop",
            "timestamp": timestamp,
        },
    }


async def two_turns(client: Client, **create: Any) -> tuple[str, list[str]]:
    """A session with question, answer, question, answer: (session id, entry ids)."""
    opened = await client.session.create(cwd="/tmp/pi-session-py", inMemory=True, **create)
    session = opened["sessionId"]
    ids = []
    for i, entry in enumerate([user("one"), assistant("1"), user("two"), assistant("2")]):
        entry["message"]["timestamp"] = i + 1
        ids.append((await client.session.append(sessionId=session, entry=entry))["entryId"])
    return session, ids
