"""``run_workflow`` with ``sweep`` as an agent sees it (``svc mcp`` over real stdio)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from svc_host.settings.paths import SvcPaths
from svc_host.store.database import Store
from svc_host.sweeps import store as repo

GRID = """\
name: grid
args: {a: 0, b: none}
jobs:
  - {name: cell, command: "echo {{ a }}{{ b }} > {{ a }}{{ b }}.txt"}
"""


@pytest.fixture
def grid(svc_home: dict[str, str]) -> Path:
    path = Path(svc_home["SVC_WORK"]) / "grid.yaml"
    path.write_text(GRID)
    return path


@pytest.mark.usefixtures("grid")
async def test_sweep_errors_have_the_spec_messages(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        both = await mcp("run_workflow", yaml_path="grid.yaml", dry_run=True, sweep={"matrix": {"a": [1]}})
        assert both == {
            "success": False,
            "error": "dry_run cannot be combined with sweep: dry_run previews a plain run and a sweep always "
            "executes; drop one of them",
        }
        cases = [
            ({"matrix": [1]}, "sweep.matrix must be a mapping"),
            ({"lr": [1]}, "invalid sweep spec: matrix: Field required; lr: Extra inputs are not permitted"),
            ({"matrix": {"a": [{"x": 1}]}}, "invalid sweep spec: matrix: axis 'a' value 0 must be a string, number or"),
            (
                {"matrix": {"a": [1, "python:exec('x')"]}},
                "sweep.matrix at 'a[1]' contains 'python:' prefix which is not allowed: 'python:exec('x')'",
            ),
            (
                {"matrix": {"a": list(range(1001))}},
                "invalid sweep spec: the matrix has 1001 cells; at most 1000 are allowed",
            ),
        ]
        for sweep, error in cases:
            result = await mcp("run_workflow", yaml_path="grid.yaml", sweep=sweep)
            assert result["success"] is False, sweep
            assert result["error"].startswith(error), result
        python_args = await mcp(
            "run_workflow", yaml_path="grid.yaml", sweep={"matrix": {"a": [1]}}, args={"b": "python:1"}
        )
        assert python_args == {
            "success": False,
            "error": "args at 'b' contains 'python:' prefix which is not allowed: 'python:1'",
        }
    store = Store(SvcPaths.from_env().database_url)
    assert store.call(repo.list_sweeps) == []  # nothing was written
    store.close()


@pytest.mark.cluster
@pytest.mark.usefixtures("grid", "slurm_cluster")
async def test_a_sweep_blocks_until_every_cell_ended_with_progress(svc_home: dict[str, str]) -> None:
    work = Path(svc_home["SVC_WORK"])
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "svc_host", "mcp", "--root", svc_home["SVC_WORK"]],
        env=svc_home,
        cwd=svc_home["SVC_WORK"],
    )
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with Client(params) as client:
        result = await client.call_tool(
            "run_workflow",
            {"yaml_path": "grid.yaml", "sweep": {"matrix": {"a": [1, 2], "b": ["x", "y"]}, "max_parallel": 3}},
            progress_callback=on_progress,
        )
    body = result.structured_content
    assert body is not None
    sweep_id = body.get("sweep_run_id")
    assert body == {
        "success": True,
        "sweep_run_id": sweep_id,
        "status": "completed",
        "cell_count": 4,
        "cells_completed": 4,
        "cells_failed": 0,
        "cells_cancelled": 0,
        "paused": False,
        "cells_held": 0,
        "max_failures": None,
        "error": None,
    }
    assert isinstance(sweep_id, int)
    assert sorted(path.name for path in work.glob("*.txt")) == ["1x.txt", "1y.txt", "2x.txt", "2y.txt"]
    values = [done for done, _, _ in progress]
    assert values == sorted(set(values))  # every notification moves forward
    assert progress[-1][:2] == (4, 4)
    assert all(total == 4 for _, total, _ in progress)
    assert (
        progress[-1][2]
        == f"sweep {sweep_id} completed: 4/4 cells ended (4 completed, 0 failed, 0 cancelled), 0 running"
    )
    store = Store(SvcPaths.from_env().database_url)
    sweep = store.call(repo.get_sweep, sweep_id)
    assert sweep is not None
    assert sweep.submission_source == "mcp"
    assert {cell.triggered_by for cell in store.call(repo.cells, sweep_id)} == {"mcp"}
    store.close()
