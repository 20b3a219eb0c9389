"""The errors a client call raises."""

from __future__ import annotations

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
