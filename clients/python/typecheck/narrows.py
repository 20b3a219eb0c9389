"""Checked by tests/python_client.rs with `mypy --strict`, which must accept it: entries narrow
on `type`, messages on `role` and content blocks on `type`, with no cast; a front-end calls
methods with snake_case keywords (or the wire's camelCase ones) and appends what the builders
make, with no type of its own."""

from pi_session import Client, assistant_message, custom_entry, label_entry, user_message
from pi_session.schema import AgentMessage, AnyEntry, EntriesResult


def describe_entry(entry: AnyEntry) -> str:
    if entry["type"] == "message":
        return describe_message(entry["message"])
    if entry["type"] == "compaction":
        return f"{entry['summary']} ({entry['tokensBefore']} tokens)"
    if entry["type"] == "branch_summary":
        return f"{entry['fromId']}: {entry['summary']}"
    if entry["type"] == "label":
        return entry["targetId"]
    if entry["type"] == "leaf":
        return entry["targetId"] or "before the first entry"
    if entry["type"] == "usage":
        return f"{entry['kind']} {entry['usage']['input']}"
    return entry["type"]


def describe_message(message: AgentMessage) -> str:
    if message["role"] == "assistant":
        parts = []
        for block in message["content"]:
            if block["type"] == "toolCall":
                parts.append(f"{block['name']}({', '.join(block['arguments'])})")
            elif block["type"] == "thinking":
                parts.append(block["thinking"])
            else:
                parts.append(block["text"])
        return "".join(parts)
    if message["role"] == "user":
        content = message["content"]
        if isinstance(content, str):
            return content
        return "".join(b["text"] if b["type"] == "text" else b["mimeType"] for b in content)
    if message["role"] == "toolResult":
        return f"{message['toolName']} {message['isError']}"
    if message["role"] == "bashExecution":
        return message["command"]
    return message["role"]


def lines(answer: EntriesResult) -> list[str]:
    return [describe_entry(entry) for entry in answer["entries"]]


async def front_end(client: Client) -> str:
    await client.initialize(hook_timeout_ms=1_000, deterministic=True)
    opened = await client.session.create(cwd="/p", in_memory=True)
    sid = opened["sessionId"]
    asked = await client.session.append(session_id=sid, entry=user_message("2+2?"))
    answer = assistant_message(
        [{"type": "toolCall", "id": "c1", "name": "add", "arguments": {"a": 2}}],
        provider="p", model="m",
    )
    await client.session.append(session_id=sid, entry=answer)
    await client.session.append(session_id=sid, entry=label_entry(asked["entryId"], "q"))
    await client.session.append(sessionId=sid, entry=custom_entry("state", {"n": 1}))
    moved = await client.session.navigate_tree(session_id=sid, target_id=asked["entryId"])
    built = answer["message"]
    if built["role"] == "assistant":
        return f"{built['stopReason']} {moved['editorText']}"
    return describe_message(built)
