"""``svc flow run --sweep`` and ``svc sweep`` as a user runs them: real processes, one-line errors, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.testing.waiting import eventually_blocking

GRID = """\
name: grid
args: {a: 0, b: none}
jobs:
  - {name: cell, command: "test {{ a }} != bad && echo {{ a }}{{ b }} > {{ a }}{{ b }}.txt"}
"""


def svc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def grid() -> Path:
    path = Path.cwd() / "grid.yaml"
    path.write_text(GRID)
    return path


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--sweep", "a"), 2, "--sweep expects NAME=VALUE[,VALUE...], got 'a'"),
        (("--sweep", "a="), 2, "--sweep expects NAME=VALUE[,VALUE...], got 'a='"),
        (("--sweep", "a=1", "--sweep", "a=2"), 2, "--sweep a is given twice; list all its values once: a=v1,v2"),
        (("--sweep", "a=1", "--dry-run"), 2, "--dry-run previews a plain run; a sweep always executes"),
        (("--fail-fast",), 2, "--max-parallel and --fail-fast need --sweep"),
        (("--sweep", "a=1", "--max-parallel", "0"), 2, "Invalid value for '--max-parallel'"),
        (
            ("--sweep", "a=" + ",".join(map(str, range(1001)))),
            1,
            "error: invalid sweep spec: the matrix has 1001 cells; at most 1000 are allowed",
        ),
        (
            ("--sweep", "a=python:1"),
            1,
            "error: sweep.matrix at 'a[0]' contains 'python:' prefix which is not allowed: 'python:1'",
        ),
        (("--sweep", "a=1", "--transport", "nope"), 1, "error: unknown transport 'nope'"),
    ],
)
def test_bad_sweeps_are_one_line_errors(grid: Path, args: tuple[str, ...], code: int, message: str) -> None:
    result = svc("flow", "run", str(grid), *args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    if code == 1:
        assert len(result.stderr.strip().splitlines()) == 1
    assert json.loads(svc("sweep", "list", "--json").stdout) == []


def test_unknown_sweeps() -> None:
    for command in ("show", "cells", "cancel"):
        result = svc("sweep", command, "7")
        assert (result.returncode, result.stderr) == (1, "error: sweep run 7 not found\n"), command
    assert svc("sweep", "show", "seven").returncode == 2


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_a_sweep_runs_to_the_end_and_is_listed(grid: Path) -> None:
    terminal = {"FORCE_COLOR": "1", "COLUMNS": "80"}  # rich draws its live bars as on a terminal
    result = svc("flow", "run", str(grid), "--sweep", "a=1,2", "--sweep", "b=x,y", "--max-parallel", "2", env=terminal)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("sweep 1 (grid) completed: 4 completed, 0 failed, 0 cancelled of 4 cells")
    bars = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", result.stdout)
    for state, count in (("pending", 0), ("running", 0), ("completed", 4), ("failed", 0), ("cancelled", 0)):
        assert re.search(rf"{state} .* {count}/4", bars), state
    assert sorted(path.name for path in Path.cwd().glob("*.txt")) == ["1x.txt", "1y.txt", "2x.txt", "2y.txt"]
    [listed] = json.loads(svc("sweep", "list", "--json").stdout)
    assert (listed["id"], listed["status"], listed["submission_source"]) == (1, "completed", "cli")
    assert (listed["matrix"], listed["max_parallel"]) == ({"a": ["1", "2"], "b": ["x", "y"]}, 2)
    assert json.loads(svc("sweep", "show", "1", "--json").stdout) == listed
    cells = json.loads(svc("sweep", "cells", "1", "--json").stdout)
    assert [(cell["args"], cell["triggered_by"]) for cell in cells] == [
        ({"a": a, "b": b}, "cli") for a in "12" for b in "xy"
    ]
    table = svc("sweep", "list")
    assert "grid" in table.stdout
    assert "completed" in table.stdout
    again = svc("sweep", "cancel", "1")
    assert (again.returncode, again.stderr) == (1, "error: sweep run 1 is already completed; nothing to cancel\n")


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_a_failed_sweep_exits_1_with_the_reason(grid: Path) -> None:
    result = svc("flow", "run", str(grid), "--sweep", "a=bad,2,3", "--fail-fast", "--max-parallel", "1", "--json")
    assert result.returncode == 1
    sweep = json.loads(result.stdout)
    assert (sweep["status"], sweep["cells_failed"], sweep["cells_cancelled"], sweep["fail_fast"]) == (
        "failed",
        1,
        2,
        True,
    )
    assert result.stderr.startswith(f"error: sweep {sweep['id']} failed: 1 of 3 cells failed; first: cell ")


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_detach_then_cancel() -> None:
    Path("slow.yaml").write_text("name: slow\nargs: {x: 0}\njobs:\n  - {name: nap, command: 'sleep 120'}\n")
    started = svc("flow", "run", "slow.yaml", "--sweep", "x=1,2,3", "--max-parallel", "1", "--detach")
    assert started.returncode == 0, started.stderr
    sweep_id = started.stdout.strip()
    assert sweep_id.isdigit()
    cells = json.loads(svc("sweep", "cells", sweep_id, "--json").stdout)
    assert [cell["status"] for cell in cells] == ["running"] * 3  # one job array: every cell submitted
    cancelled = svc("sweep", "cancel", sweep_id, "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    body = json.loads(cancelled.stdout)
    assert (body["status"], body["cells_cancelled"], body["cells_running"]) == ("draining", 0, 3)
    shown = json.loads(svc("sweep", "show", sweep_id, "--json").stdout)
    assert (shown["status"], shown["cells_cancelled"]) == ("cancelled", 3)
    assert shown["cancel_requested_at"] == body["cancel_requested_at"]
    second = svc("sweep", "cancel", sweep_id)
    assert second.returncode == 0
    assert f"sweep {sweep_id} (slow) cancelled: 0 completed, 0 failed, 3 cancelled of 3 cells" in second.stdout

    def cancelled_in_slurm() -> bool:  # every cell's task (the one running and those waiting their turn)
        shown = [json.loads(svc("flow", "show", cell["id"], "--json").stdout) for cell in cells]
        return all(run["job_statuses"] == {"nap": "CANCELLED"} for run in shown)

    eventually_blocking(cancelled_in_slurm, interval=0.5, what="every cell's task cancelled in Slurm")
