"""Checked by tests/python_client.rs with `mypy --strict`, which must refuse it: each line
marked `error` misreads a type (the test names the errors)."""

from pi_session import Client, tool_result_message, user_message
from pi_session.schema import AnyEntry, ToolCall


def misread(entry: AnyEntry) -> object:
    if entry["type"] == "label":
        return entry["summary"]  # error: a label has no summary
    if entry["type"] == "message":
        message = entry["message"]
        if message["role"] == "user":
            return message["toolName"]  # error: a user message has no toolName
    return None


async def misuse(client: Client) -> object:
    opened = await client.session.create(cwd="/p", in_memory=True)
    sid = opened["session_id"]  # error: results keep the wire's camelCase keys
    built = user_message("hi")
    await client.session.append(session_id=sid, entry=built["message"])  # error: a message, not an entry
    call: ToolCall = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    return tool_result_message("c1", "read", [call])  # error: a tool call is no tool result content
