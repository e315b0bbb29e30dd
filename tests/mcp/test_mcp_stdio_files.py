"""``svc mcp`` reads and writes its pipes with the event loop (``svc_host.mcp.stdio``); with stdout redirected to
a regular file, which the loop cannot watch, the SDK's own stdio transport serves the same answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.mcp.test_mcp_opening import frame


def test_answers_reach_a_regular_file_on_stdout(svc_home: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "answers.jsonl"
    with out.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "svc_host", "mcp"],
            input=frame("a", "server/discover") + frame("b", "tools/list"),
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=svc_home,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    first, second = (json.loads(line) for line in out.read_text().splitlines())
    assert first["id"] == "a"
    assert "tools" in first["result"]["capabilities"]
    assert second["id"] == "b"
    assert {"get_job_status", "list_jobs"} <= {tool["name"] for tool in second["result"]["tools"]}
