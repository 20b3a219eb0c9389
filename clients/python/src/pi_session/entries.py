"""Builders for the entries a front-end appends most (`session/append`'s `entry`), with pi's
field names and the defaults pi's agent writes. Each returns the generated type `append`
takes (`NewMessageEntry`, `NewCustomEntry`, ...: `pi_session.schema`), so a built entry is
passed on as it is; the server adds `id`, `parentId` and the entry's `timestamp`."""

from __future__ import annotations

import time
from collections.abc import Sequence

from .schema import (
    AssistantContentBlock,
    AssistantMessage,
    ExtensionData,
    NewCustomEntry,
    NewCustomMessageEntry,
    NewLabelEntry,
    NewMessageEntry,
    StopReason,
    ToolResultMessage,
    Usage,
    UserContent,
    UserContentBlock,
)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _text_blocks(content: str | Sequence[UserContentBlock]) -> list[UserContentBlock]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def _content(content: str | Sequence[UserContentBlock]) -> UserContent:
    """A user or custom message's `content`: a string stays one (pi keeps it so)."""
    return content if isinstance(content, str) else list(content)


def zero_usage() -> Usage:
    """pi's `Usage` with every count and cost 0."""
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def user_message(content: str | Sequence[UserContentBlock], *,
                 timestamp: int | None = None) -> NewMessageEntry:
    """A user message entry; `timestamp` (ms) defaults to now."""
    return {"type": "message", "message": {
        "role": "user", "content": _content(content),
        "timestamp": _now_ms() if timestamp is None else timestamp}}


def assistant_message(content: str | Sequence[AssistantContentBlock], *, provider: str,
                      model: str, api: str | None = None, usage: Usage | None = None,
                      stop_reason: StopReason | None = None, error_message: str | None = None,
                      timestamp: int | None = None) -> NewMessageEntry:
    """An assistant message entry. `content` may be plain text; `stop_reason` defaults to
    `toolUse` when a part is a tool call, else `stop`; `usage` to zeros."""
    parts: list[AssistantContentBlock] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content))
    if stop_reason is None:
        stop_reason = "toolUse" if any(p["type"] == "toolCall" for p in parts) else "stop"
    message: AssistantMessage = {
        "role": "assistant", "content": parts, "api": api or f"{provider}-messages",
        "provider": provider, "model": model,
        "usage": usage if usage is not None else zero_usage(),
        "stopReason": stop_reason, "timestamp": _now_ms() if timestamp is None else timestamp}
    if error_message is not None:
        message["errorMessage"] = error_message
    return {"type": "message", "message": message}


def tool_result_message(tool_call_id: str, tool_name: str,
                        content: str | Sequence[UserContentBlock], *, is_error: bool = False,
                        details: ExtensionData = None,
                        timestamp: int | None = None) -> NewMessageEntry:
    """A tool result message entry answering the tool call `tool_call_id`."""
    message: ToolResultMessage = {
        "role": "toolResult", "toolCallId": tool_call_id, "toolName": tool_name,
        "content": _text_blocks(content), "isError": is_error,
        "timestamp": _now_ms() if timestamp is None else timestamp}
    if details is not None:
        message["details"] = details
    return {"type": "message", "message": message}


def custom_entry(custom_type: str, data: ExtensionData = None) -> NewCustomEntry:
    """An extension's own entry (pi's `appendCustomEntry`): in the file, never in the context."""
    entry: NewCustomEntry = {"type": "custom", "customType": custom_type}
    if data is not None:
        entry["data"] = data
    return entry


def custom_message_entry(custom_type: str, content: str | Sequence[UserContentBlock], *,
                         display: bool = True,
                         details: ExtensionData = None) -> NewCustomMessageEntry:
    """An extension's message (pi's `appendCustomMessageEntry`): in the context as role
    `custom`."""
    entry: NewCustomMessageEntry = {
        "type": "custom_message", "customType": custom_type, "content": _content(content),
        "display": display}
    if details is not None:
        entry["details"] = details
    return entry


def label_entry(target_id: str, label: str | None = None) -> NewLabelEntry:
    """A label on entry `target_id` (pi's `appendLabelChange`); `None` clears it."""
    entry: NewLabelEntry = {"type": "label", "targetId": target_id}
    if label is not None:
        entry["label"] = label
    return entry
