"""The ``local`` transport's log reader: regular files only, never stuck on a FIFO."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from svc_host.errors import TransportError
from svc_plugin_local.transport import LocalTransport


async def test_a_fifo_under_a_logs_name_is_an_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "job-1.out"
    os.mkfifo(fifo)
    with pytest.raises(TransportError, match="is not a regular file"):
        await asyncio.wait_for(LocalTransport().read_bytes(str(fifo), 0, 100), timeout=30)


async def test_a_regular_log_is_read_from_its_offset(tmp_path: Path) -> None:
    log = tmp_path / "job-1.out"
    log.write_bytes(b"hello world")
    assert await LocalTransport().read_bytes(str(log), 6, 100) == (b"world", 11)
    assert await LocalTransport().read_bytes(str(tmp_path / "missing"), 0, 100) is None
