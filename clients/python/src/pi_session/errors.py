"""The errors a client call raises."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

# JSON-RPC's codes and the protocol's own (protocol/protocol.md, "Errors").
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800


class RpcError(Exception):
    """An error answer: `code` and `kind` (the stable `data.kind` of an application error,
    e.g. `"session_not_found"`; `None` for JSON-RPC's own errors) are for programs, the
    message is for people."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data
        kind = data.get("kind") if isinstance(data, dict) else None
        self.kind: str | None = kind if isinstance(kind, str) else None


class ConnectionClosed(ConnectionError):
    """The server's output ended (it exited or closed stdout) with requests unanswered. When
    it died, the message says so with its exit status and its last lines on stderr, also kept
    as `returncode` and `log_lines`."""

    def __init__(self, message: str, *, returncode: int | None = None,
                 log_lines: list[str] | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.log_lines: list[str] = log_lines or []


class BinaryNotFound(FileNotFoundError):
    """No pi-session binary: not given, no `PI_SESSION_BIN`, none installed beside this Python
    nor on `PATH`."""


class CancelledWithResult(asyncio.CancelledError):
    """The awaiting task was cancelled, but the server had already made the change and
    answered it (a change that has started is never stopped half-way). The task still ends
    cancelled, as asyncio's contract asks (`asyncio.timeout` and `TaskGroup` rely on it);
    `result` is the server's answer, so a caller that catches this can tell the change
    happened. See `cancelled_with_result` for Python 3.11."""

    def __init__(self, method: str, result: Any) -> None:
        super().__init__(f"{method} was cancelled after the server made the change")
        self.method = method
        self.result = result


def cancelled_with_result(method: str, result: Any) -> asyncio.CancelledError:
    """The cancellation a request ends with when its change happened anyway. Python 3.11's
    `asyncio.timeout` and `TaskGroup` recognise only `CancelledError` itself (3.12 accepts
    subclasses), so there it is a plain `CancelledError` carrying the same `method` and
    `result` attributes; from 3.12 on, a `CancelledWithResult`."""
    if sys.version_info >= (3, 12):
        return CancelledWithResult(method, result)
    plain = asyncio.CancelledError(f"{method} was cancelled after the server made the change")
    plain.method = method  # type: ignore[attr-defined]
    plain.result = result  # type: ignore[attr-defined]
    return plain
