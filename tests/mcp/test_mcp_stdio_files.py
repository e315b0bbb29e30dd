"""``svc mcp`` reads and writes its pipes with the event loop (``svc_host.mcp.stdio``); with stdout redirected to
a regular file, which the loop cannot watch, the SDK's own stdio transport serves the same answers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.mcp.test_mcp_opening import INITIALIZED, frame, initialize


def served_to_a_file(svc_home: dict[str, str], tmp_path: Path, frames: bytes, answers: int) -> list[dict[str, Any]]:
    """The first ``answers`` lines ``svc mcp`` writes to a regular file for ``frames``. Stdin is closed only once
    they are there: a client that closes stdin is gone, and the SDK cancels what it has not answered yet."""
    out = tmp_path / "answers.jsonl"
    with out.open("wb") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "svc_host", "mcp"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=svc_home,
        )
        assert process.stdin is not None
        process.stdin.write(frames)
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while len(out.read_bytes().splitlines()) < answers and time.monotonic() < deadline:
            time.sleep(0.1)
        _, errors = process.communicate(timeout=60)
    assert process.returncode == 0, errors.decode()
    assert b"Traceback" not in errors, errors.decode()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_answers_reach_a_regular_file_on_stdout(svc_home: dict[str, str], tmp_path: Path) -> None:
    first, second = served_to_a_file(svc_home, tmp_path, frame("a", "server/discover") + frame("b", "tools/list"), 2)
    assert first["id"] == "a"
    assert "tools" in first["result"]["capabilities"]
    assert second["id"] == "b"
    assert {"get_job_status", "list_jobs"} <= {tool["name"] for tool in second["result"]["tools"]}


def test_the_sdk_answers_initialize_once_when_its_answer_cannot_be_held_back(
    svc_home: dict[str, str], tmp_path: Path
) -> None:
    opening = frame(1, "initialize", initialize("2025-06-18"))
    hello, listed = served_to_a_file(svc_home, tmp_path, opening + INITIALIZED + frame(2, "tools/list", {}), 2)
    assert hello["id"] == 1
    assert hello["result"]["protocolVersion"] == "2025-06-18"
    assert listed["id"] == 2
    assert "submit_job" in {tool["name"] for tool in listed["result"]["tools"]}
