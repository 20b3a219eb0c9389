"""LSP framing (`Content-Length: N\r\n\r\n` + N bytes of UTF-8 JSON), the one the client speaks.

Chosen over JSON lines because a body is read by its declared length (no line-length limit
on the reader, no scanning of large answers for a newline)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

MAX_HEADER_LINES = 64


class FramingError(ValueError):
    """The server's output is not LSP frames."""


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_frame(reader: asyncio.StreamReader, max_bytes: int) -> Any | None:
    """The next message, or `None` at the end of the output between frames. Reads exactly one
    frame, so the server's output stays in the pipe until the client is ready for it."""
    length: int | None = None
    for _ in range(MAX_HEADER_LINES):
        line = await reader.readline()
        if not line:
            if length is None:
                return None
            raise FramingError("the output ended inside a frame header")
        line = line.rstrip(b"\r\n")
        if not line:
            if length is None:
                continue  # blank lines between frames
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"bad Content-Length header {line!r}") from None
    else:
        raise FramingError(f"no end of the frame header after {MAX_HEADER_LINES} lines")
    if length is None or length < 0:
        raise FramingError("a frame without a Content-Length")
    if length > max_bytes:
        raise FramingError(f"a frame of {length} bytes, over the limit of {max_bytes}")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise FramingError("the output ended inside a frame body") from None
    return json.loads(body)
