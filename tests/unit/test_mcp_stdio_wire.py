"""Which stdin/stdout ``svc mcp`` reads and writes with the event loop (``svc_host.mcp.stdio``): pipes and
sockets, what MCP clients connect. A terminal, a regular file and the null device are left to the SDK's own
transport: the loop would make a terminal non-blocking for the shell that shares it too. The SDK's answer to an
``initialize`` svc answered before the SDK was loaded is not sent twice."""

from __future__ import annotations

import json
import logging
import os
import pty
import socket
from pathlib import Path

import pytest

from svc_host.mcp.handoff import watchable
from svc_host.mcp.opening import VERIFIED_SDK, Early, early_answer
from svc_host.mcp.stdio import answers_again

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}}


def answered(request_id: int | str = 1) -> Early:
    opening = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": HELLO}).encode()
    early = early_answer(opening, VERIFIED_SDK)
    assert early is not None
    return early


def test_pipes_and_sockets_are_served_by_the_loop() -> None:
    read_end, write_end = os.pipe()
    ours, theirs = socket.socketpair()
    try:
        assert watchable(read_end)
        assert watchable(write_end)
        assert watchable(ours.fileno())
    finally:
        for fd in (read_end, write_end):
            os.close(fd)
        ours.close()
        theirs.close()


def test_terminals_files_and_the_null_device_are_left_to_the_sdk(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    regular = os.open(tmp_path / "answers.jsonl", os.O_WRONLY | os.O_CREAT, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        assert not watchable(follower)
        assert not watchable(regular)
        assert not watchable(null)
    finally:
        for fd in (leader, follower, regular, null):
            os.close(fd)


def test_the_sdks_answer_to_the_initialize_svc_answered_is_held_back(caplog: pytest.LogCaptureFixture) -> None:
    early = answered()
    assert answers_again(early.line.decode(), early)
    assert not caplog.records


@pytest.mark.parametrize(
    "line",
    [
        {"jsonrpc": "2.0", "id": 2, "result": {}},  # another request's answer
        {"jsonrpc": "2.0", "id": "1", "result": {}},  # a string id is another id
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
        {"jsonrpc": "2.0", "id": 1, "method": "roots/list"},  # the server's own request, numbered like the client's
    ],
)
def test_every_other_line_goes_out(line: dict[str, object]) -> None:
    assert not answers_again(json.dumps(line), answered())


def test_an_sdk_answer_unlike_svcs_is_held_back_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    early = answered("a")
    refused = {"jsonrpc": "2.0", "id": "a", "error": {"code": -32602, "message": "Invalid request parameters"}}
    with caplog.at_level(logging.WARNING, logger="svc_host.mcp.stdio"):
        assert answers_again(json.dumps(refused), early)
    assert "Invalid request parameters" in caplog.text
