"""Builders for the entries a front-end appends most (`session/append`'s `entry`), with pi's
field names and the defaults pi's agent writes. Each returns a plain dict; the server adds
`id`, `parentId` and the entry's `timestamp`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _text_parts(content: str | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(part) for part in content]


def zero_usage() -> dict[str, Any]:
    """pi's `Usage` with every count and cost 0."""
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def user_message(content: str | Sequence[Mapping[str, Any]], *,
                 timestamp: int | None = None) -> dict[str, Any]:
    """A user message entry; `timestamp` (ms) defaults to now."""
    return {"type": "message", "message": {
        "role": "user",
        "content": content if isinstance(content, str) else [dict(p) for p in content],
        "timestamp": _now_ms() if timestamp is None else timestamp}}


def assistant_message(content: str | Sequence[Mapping[str, Any]], *, provider: str, model: str,
                      api: str | None = None, usage: Mapping[str, Any] | None = None,
                      stop_reason: StopReason | None = None, error_message: str | None = None,
                      timestamp: int | None = None) -> dict[str, Any]:
    """An assistant message entry. `content` may be plain text; `stop_reason` defaults to
    `toolUse` when a part is a tool call, else `stop`; `usage` to zeros."""
    parts = _text_parts(content)
    if stop_reason is None:
        stop_reason = "toolUse" if any(p.get("type") == "toolCall" for p in parts) else "stop"
    message: dict[str, Any] = {
        "role": "assistant", "content": parts, "api": api or f"{provider}-messages",
        "provider": provider, "model": model,
        "usage": dict(usage) if usage is not None else zero_usage(),
        "stopReason": stop_reason, "timestamp": _now_ms() if timestamp is None else timestamp}
    if error_message is not None:
        message["errorMessage"] = error_message
    return {"type": "message", "message": message}


def tool_result_message(tool_call_id: str, tool_name: str,
                        content: str | Sequence[Mapping[str, Any]], *, is_error: bool = False,
                        details: Any = None, timestamp: int | None = None) -> dict[str, Any]:
    """A tool result message entry answering the tool call `tool_call_id`."""
    message: dict[str, Any] = {
        "role": "toolResult", "toolCallId": tool_call_id, "toolName": tool_name,
        "content": _text_parts(content), "isError": is_error,
        "timestamp": _now_ms() if timestamp is None else timestamp}
    if details is not None:
        message["details"] = details
    return {"type": "message", "message": message}


def custom_entry(custom_type: str, data: Any = None) -> dict[str, Any]:
    """An extension's own entry (pi's `appendCustomEntry`): in the file, never in the context."""
    entry: dict[str, Any] = {"type": "custom", "customType": custom_type}
    if data is not None:
        entry["data"] = data
    return entry


def custom_message_entry(custom_type: str, content: str | Sequence[Mapping[str, Any]], *,
                         display: bool = True, details: Any = None) -> dict[str, Any]:
    """An extension's message (pi's `appendCustomMessageEntry`): in the context as role
    `custom`."""
    entry: dict[str, Any] = {
        "type": "custom_message", "customType": custom_type,
        "content": content if isinstance(content, str) else [dict(p) for p in content],
        "display": display}
    if details is not None:
        entry["details"] = details
    return entry


def label_entry(target_id: str, label: str | None = None) -> dict[str, Any]:
    """A label on entry `target_id` (pi's `appendLabelChange`); `None` clears it."""
    entry: dict[str, Any] = {"type": "label", "targetId": target_id}
    if label is not None:
        entry["label"] = label
    return entry
