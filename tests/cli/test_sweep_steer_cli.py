"""``svc sweep pause|resume`` and ``svc flow run --sweep ... --max-failures`` as a user runs them: real
processes, one-line errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_sweep_cli import grid, svc

__all__ = ["grid"]  # the fixture, used by name

BUDGET = """\
name: budget
args: {a: 0}
jobs:
  - {name: cell, command: "test {{ a }} != bad || exit 1; sleep 20"}
"""


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--max-failures", "1"), 2, "--max-failures needs --sweep"),
        (("--sweep", "a=1", "--max-failures", "-1"), 2, "Invalid value for '--max-failures'"),
        (
            ("--sweep", "a=1", "--max-failures", "1", "--fail-fast"),
            1,
            "error: invalid sweep spec: give fail_fast or max_failures, not both",
        ),
    ],
)
def test_a_bad_failure_budget_is_a_one_line_error(grid: Path, args: tuple[str, ...], code: int, message: str) -> None:
    result = svc("flow", "run", str(grid), *args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    if code == 1:
        assert len(result.stderr.strip().splitlines()) == 1
    assert json.loads(svc("sweep", "list", "--json").stdout) == []


def test_steering_an_unknown_sweep() -> None:
    for command in ("pause", "resume"):
        result = svc("sweep", command, "7")
        assert (result.returncode, result.stderr) == (1, "error: sweep run 7 not found\n"), command
    assert svc("sweep", "pause", "seven").returncode == 2


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_pause_resume_and_cancel_a_detached_sweep() -> None:
    Path("slow.yaml").write_text("name: slow\nargs: {x: 0}\njobs:\n  - {name: nap, command: 'sleep 120'}\n")
    started = svc("flow", "run", "slow.yaml", "--sweep", "x=1,2,3", "--max-parallel", "1", "--detach")
    assert started.returncode == 0, started.stderr
    sweep_id = started.stdout.strip()
    paused = svc("sweep", "pause", sweep_id)
    assert paused.returncode == 0, paused.stderr
    assert f"sweep {sweep_id} (slow) running (paused, " in paused.stdout
    assert paused.stdout.strip().endswith(f"(svc sweep resume {sweep_id} to go on)")
    shown = json.loads(svc("sweep", "show", sweep_id, "--json").stdout)
    assert shown["paused_at"] is not None
    assert shown["cells_held"] >= 2  # the array's tasks waiting their turn (the first may be running)
    assert "paused" in svc("sweep", "list").stdout
    resumed = json.loads(svc("sweep", "resume", sweep_id, "--json").stdout)
    assert (resumed["paused_at"], resumed["cells_held"]) == (None, 0)
    assert svc("sweep", "cancel", sweep_id).returncode == 0
    ended = svc("sweep", "pause", sweep_id)
    assert ended.returncode == 1
    assert ended.stderr in (  # the cancel may still be draining the running task
        f"error: sweep run {sweep_id} is being cancelled; nothing to pause\n",
        f"error: sweep run {sweep_id} is already cancelled; nothing to pause\n",
    )


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_max_failures_stops_the_sweep_with_the_reason() -> None:
    Path("budget.yaml").write_text(BUDGET)
    result = svc(
        "flow", "run", "budget.yaml", "--sweep", "a=bad,bad,2,3", "--max-failures", "1", "--max-parallel", "1", "--json"
    )
    assert result.returncode == 1
    sweep = json.loads(result.stdout)
    assert (sweep["status"], sweep["cells_failed"], sweep["cells_cancelled"], sweep["max_failures"]) == (
        "failed",
        2,
        2,
        1,
    )
    assert result.stderr.startswith(
        f"error: sweep {sweep['id']} failed: stopped: 2 of 4 cells failed, more than max_failures 1; "
        "the cells left were cancelled; first: cell "
    )
