"""A misbehaving server for the framing tests: reads one LSP request, answers as its mode
says, then waits for the end of its input."""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def read() -> Any:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    assert length is not None
    return json.loads(sys.stdin.buffer.read(length))


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


request = read()
mode = sys.argv[1]
out = sys.stdout.buffer
if mode == "garbage":
    out.write(b"Content-Length: nope\r\n\r\n{}")
elif mode == "huge":
    out.write(b"Content-Length: 1000000\r\n\r\n")
elif mode == "trickle":
    # Stray answers, an error without a request, an unknown notification, extra headers and
    # blank lines, then the answer, one byte at a time.
    data = (
        frame({"jsonrpc": "2.0", "id": 999, "result": "stray"})
        + frame({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})
        + b"\r\n\r\n"
        + frame({"jsonrpc": "2.0", "method": "who_knows", "params": {}})
        + b"content-type: application/vscode-jsonrpc\r\n"
        + frame({"jsonrpc": "2.0", "id": request["id"], "result": {"é": "ü\u2028"}})
    )
    for byte in data:
        out.write(bytes([byte]))
        out.flush()
        time.sleep(0.0005)
out.flush()
read()
