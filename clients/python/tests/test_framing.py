"""The client against a server that misbehaves on the wire: it fails what waits, clearly,
instead of hanging or reading without bound; and reads a frame however it is split."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from pi_session import Client, ConnectionClosed
from pi_session.client import DEFAULT_MAX_FRAME_BYTES

FAKE = str(Path(__file__).with_name("fake_server.py"))


def fake(mode: str, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> Client:
    return Client(sys.executable, args=[FAKE, mode], max_frame_bytes=max_frame_bytes)


async def test_a_malformed_header_fails_the_request_naming_it() -> None:
    async with fake("garbage") as client:
        with pytest.raises(ConnectionClosed, match="bad Content-Length"):
            await asyncio.wait_for(client.request("anything"), 10)
        with pytest.raises(ConnectionClosed):
            await client.request("anything else")


async def test_a_frame_over_the_limit_is_refused_before_its_body_is_read() -> None:
    async with fake("huge", max_frame_bytes=1000) as client:
        with pytest.raises(ConnectionClosed, match="1000000 bytes, over the limit of 1000"):
            await asyncio.wait_for(client.request("anything"), 10)


async def test_a_trickled_answer_behind_stray_messages_is_read() -> None:
    async with fake("trickle") as client:
        result = await asyncio.wait_for(client.request("anything"), 10)
        assert result == {"é": "ü\u2028"}
