"""``svc flow show`` lists the attempts of a retried run and why each retry was made (dev cluster)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("slurm_cluster")]

FLOW = """\
name: cli-retries
jobs:
  - {name: flaky, command: "test -e failed-once || { touch failed-once; exit 3; }", retry: 1, retry_delay: 0}
"""


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", "flow", *args], capture_output=True, text=True, timeout=180, check=False
    )


def test_show_lists_the_attempts_of_a_retried_run() -> None:
    Path("retries.yaml").write_text(FLOW)
    ran = svc("run", "retries.yaml", "--json")
    assert ran.returncode == 0, ran.stderr
    run = json.loads(ran.stdout)
    assert [(a["attempt"], a["state"], a["reason"]) for a in run["attempts"]] == [
        (1, "FAILED", "FAILED: retry 1 of 1"),
        (2, "COMPLETED", None),
    ]
    shown = svc("show", run["id"])
    assert shown.returncode == 0, shown.stderr
    assert "cli-retries: completed" in shown.stdout
    rows = [line.split("│") for line in shown.stdout.splitlines() if "flaky" in line]
    cells = [[cell.strip() for cell in row[1:-1]] for row in rows[1:]]  # the attempts table, after the jobs table
    first, second = run["attempts"]
    assert [row[:4] for row in cells] == [
        ["flaky", "1", first["job_id"], "FAILED"],
        ["flaky", "2", second["job_id"], "COMPLETED"],
    ]
    assert cells[0][4:6] == ["3", "localhost"]
    assert cells[0][-1] == "FAILED: retry 1 of 1"
    assert json.loads(svc("show", run["id"], "--json").stdout)["attempts"] == run["attempts"]
