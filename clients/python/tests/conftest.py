"""Fixtures: a client of the real binary (`$PI_SESSION_BIN`, set by `cargo test`)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pi_session import BIN_ENV, Client

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def binary() -> str:
    path = os.environ.get(BIN_ENV)
    assert path, f"{BIN_ENV} must name the pi-session binary (cargo test sets it)"
    return path


@pytest.fixture
async def client(binary: str) -> AsyncIterator[Client]:
    """A started, not yet initialized client (register hooks, then initialize)."""
    async with Client(binary) as client:
        yield client
    assert client.returncode is not None
