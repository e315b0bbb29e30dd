"""Which stdin/stdout ``svc mcp`` reads and writes with the event loop (``svc_host.mcp.stdio``): pipes and
sockets, what MCP clients connect. A terminal, a regular file and the null device are left to the SDK's own
transport: the loop would make a terminal non-blocking for the shell that shares it too."""

from __future__ import annotations

import os
import pty
import socket
from pathlib import Path

from svc_host.mcp.stdio import watchable


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
