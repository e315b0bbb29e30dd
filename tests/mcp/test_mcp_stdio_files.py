"""``svc mcp`` reads and writes its pipes with the event loop (``svc_host.mcp.stdio``); with stdout redirected to
a regular file, which the loop cannot watch, the SDK's own stdio transport serves the same answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.mcp.test_mcp_opening import INITIALIZED, frame, initialize


def served_to_a_file(svc_home: dict[str, str], tmp_path: Path, frames: bytes) -> list[dict[str, Any]]:
    out = tmp_path / "answers.jsonl"
    with out.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "svc_host", "mcp"],
            input=frames,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=svc_home,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_answers_reach_a_regular_file_on_stdout(svc_home: dict[str, str], tmp_path: Path) -> None:
    first, second = served_to_a_file(svc_home, tmp_path, frame("a", "server/discover") + frame("b", "tools/list"))
    assert first["id"] == "a"
    assert "tools" in first["result"]["capabilities"]
    assert second["id"] == "b"
    assert {"get_job_status", "list_jobs"} <= {tool["name"] for tool in second["result"]["tools"]}


def test_the_sdk_answers_initialize_once_when_its_answer_cannot_be_held_back(
    svc_home: dict[str, str], tmp_path: Path
) -> None:
    opening = frame(1, "initialize", initialize("2025-06-18"))
    hello, listed = served_to_a_file(svc_home, tmp_path, opening + INITIALIZED + frame(2, "tools/list", {}))
    assert hello["id"] == 1
    assert hello["result"]["protocolVersion"] == "2025-06-18"
    assert listed["id"] == 2
    assert "submit_job" in {tool["name"] for tool in listed["result"]["tools"]}
