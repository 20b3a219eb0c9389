"""What a front-end leans on beyond the protocol: where the binary comes from, snake_case
keywords, the entry builders, a cancelled request's answer, and why a dead server died."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sysconfig
from pathlib import Path

import pytest

import pi_session
from pi_session import _tables, schema
from pi_session import (
    BinaryNotFound,
    Client,
    ConnectionClosed,
    assistant_message,
    custom_entry,
    custom_message_entry,
    label_entry,
    tool_result_message,
    user_message,
)
from pi_session.entries import zero_usage
from pi_session.schema import NewEntry, ToolCall

LIMIT = 10.0


def test_the_binary_is_the_given_one_then_the_variable_then_the_installed_one_then_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scripts = tmp_path / "scripts"
    on_path = tmp_path / "path"
    for folder in (scripts, on_path):
        folder.mkdir()
        binary = folder / "pi-session"
        binary.write_text("#!/bin/sh\n")
        binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    original = sysconfig.get_path

    def fake_get_path(name: str, *args: object, **kwargs: object) -> str:
        return str(scripts) if name == "scripts" else original(name)

    monkeypatch.setattr(sysconfig, "get_path", fake_get_path)
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.setenv("PI_SESSION_BIN", "/from/the/variable")
    assert pi_session.find_binary("/given") == "/given"
    assert pi_session.find_binary() == "/from/the/variable"
    monkeypatch.delenv("PI_SESSION_BIN")
    assert pi_session.find_binary() == str(scripts / "pi-session")
    (scripts / "pi-session").unlink()
    assert pi_session.find_binary() == str(on_path / "pi-session")
    (on_path / "pi-session").unlink()
    with pytest.raises(BinaryNotFound) as missing:
        pi_session.find_binary()
    assert sysconfig.get_platform() in str(missing.value)
    assert "PI_SESSION_BIN" in str(missing.value)


def test_snake_case_keywords_become_the_protocols_camel_case() -> None:
    assert pi_session.wire_params({"session_id": "a", "target_id": "b", "summarize": True,
                                   "sessionsRoot": "/r"}) == {
        "sessionId": "a", "targetId": "b", "summarize": True, "sessionsRoot": "/r"}


def test_every_declared_keyword_reaches_the_wire_by_its_schema_name() -> None:
    # The generator names the snake_case keywords; wire_params turns them back at run time:
    # each twin's keys must come back as exactly the params' own.
    twins = [name for name in dir(_tables) if name.endswith("Keywords")]
    assert "AppendKeywords" in twins and "SessionRefKeywords" in twins
    for name in twins:
        stem = name.removesuffix("Keywords")
        params = getattr(schema, stem + "Params", None) or getattr(schema, stem)
        keywords = getattr(_tables, name).__annotations__
        assert list(pi_session.wire_params(dict.fromkeys(keywords))) == list(
            params.__annotations__), name


def test_the_builders_write_pis_field_names() -> None:
    assert user_message("hi", timestamp=1) == {
        "type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}}
    call: ToolCall = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    built = assistant_message([call], provider="openai", model="gpt", timestamp=2)["message"]
    # The builders return the generated entry types: a message narrows on `role`, no cast.
    assert built["role"] == "assistant"
    assert built["stopReason"] == "toolUse" and built["api"] == "openai-messages"
    assert built.get("usage") == zero_usage() and zero_usage()["cost"]["total"] == 0
    assert tool_result_message("c1", "read", "text", timestamp=3)["message"] == {
        "role": "toolResult", "toolCallId": "c1", "toolName": "read",
        "content": [{"type": "text", "text": "text"}], "isError": False, "timestamp": 3}
    assert custom_entry("state") == {"type": "custom", "customType": "state"}
    assert custom_message_entry("note", "x")["display"] is True
    assert label_entry("e1") == {"type": "label", "targetId": "e1"}


async def test_built_entries_and_snake_case_keywords_make_a_session(binary: str) -> None:
    async with Client(binary) as client:
        await client.initialize(deterministic=True)
        sid = (await client.session.create(cwd="/tmp/p", in_memory=True))["sessionId"]
        entries: list[NewEntry] = [
            user_message("Read a.txt", timestamp=1),
            assistant_message([{"type": "toolCall", "id": "c1", "name": "read",
                                "arguments": {"path": "a.txt"}}],
                              provider="anthropic", model="m", timestamp=2),
            tool_result_message("c1", "read", "A", timestamp=3),
            assistant_message("It says A.", provider="anthropic", model="m", timestamp=4),
            custom_entry("state", {"n": 1}),
            custom_message_entry("note", "from an extension"),
        ]
        # Built entries are the generated types `append` takes, under mypy --strict as is.
        ids = [(await client.session.append(session_id=sid, entry=e))["entryId"]
               for e in entries]
        await client.session.append(session_id=sid, entry=label_entry(ids[0], "start"))
        context = await client.session.build_context(session_id=sid)
        roles = [m["role"] for m in context["messages"]]
        assert roles == ["user", "assistant", "toolResult", "assistant", "custom"]


async def test_search_and_stats_across_the_store_with_work_done_progress(
    binary: str, tmp_path: Path
) -> None:
    # An index of its own: the suite's shared one would hold other tests' sessions.
    env = {**os.environ, "PI_SESSION_INDEX_DIR": str(tmp_path / "index")}
    async with Client(binary, env=env) as client:
        progress: list[schema.ProgressNotification] = []
        client.notifications.progress(progress.append)
        await client.initialize(sessions_root=str(tmp_path / "sessions"))
        sid = (await client.session.create(cwd=str(tmp_path / "project")))["sessionId"]
        asked = await client.session.append(
            session_id=sid, entry=user_message("Where is the parser?", timestamp=1))
        answered = await client.session.append(
            session_id=sid,
            entry=assistant_message("In src/parser.rs.", provider="anthropic", model="m",
                                    timestamp=2))
        # snake_case keywords (`on_path`, `work_done_token`) reach the server as camelCase.
        found = await client.session.search(query="pars", on_path=True, work_done_token="t1")
        assert {hit["entryId"] for hit in found["hits"]} == {
            asked["entryId"], answered["entryId"]}
        assert all(hit["sessionId"] == sid and hit["onPath"] for hit in found["hits"])
        kinds = [p["value"]["kind"] for p in progress if p["token"] == "t1"]
        assert kinds[0] == "begin" and kinds[-1] == "end", progress
        figures = await client.session.stats(by="model", per_file=True, timezone="UTC")
        assert figures["totals"]["assistantMessages"] == 1
        assert [group["key"] for group in figures["groups"]] == ["m"]


async def test_a_server_that_dies_is_named_with_its_status_and_last_log_lines(
    binary: str,
) -> None:
    # The server logs at info (PI_SESSION_LOG) so that it has last words to quote.
    env = {**os.environ, "PI_SESSION_LOG": "info"}
    async with Client(binary, env=env) as client:
        await client.initialize()
        assert client.pid is not None
        os.kill(client.pid, signal.SIGKILL)
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(client.session.list_all(), LIMIT)
    message = str(closed.value)
    assert "the pi-session server died (killed by signal 9)" in message
    assert "initialized" in message  # its log line after initialize
    assert closed.value.returncode == -signal.SIGKILL
    assert closed.value.log_lines


async def test_the_servers_log_lines_go_to_the_pi_session_server_logger(
    binary: str, caplog: pytest.LogCaptureFixture
) -> None:
    env = {**os.environ, "PI_SESSION_LOG": "info"}
    with caplog.at_level(logging.WARNING, logger="pi_session.server"):
        async with Client(binary, env=env) as client:
            await client.initialize()
    assert any("initialized" in r.getMessage() for r in caplog.records
               if r.name == "pi_session.server")
