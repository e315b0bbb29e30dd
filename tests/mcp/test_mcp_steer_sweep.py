"""``steer_sweep`` and the sweep spec's ``max_failures`` as an agent sees them (``svc mcp`` over real stdio)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from svc_host.settings.paths import SvcPaths
from svc_host.store.database import Store
from svc_host.sweeps import steering
from svc_host.sweeps import store as repo
from svc_host.workflows import store as runs

CHAIN = """\
name: chain
args: {x: 0}
jobs:
  - {name: first, command: "sleep 2"}
  - {name: then, command: "echo {{ x }} >> ran.txt", depends_on: [first]}
"""


@pytest.fixture
def chain(svc_home: dict[str, str]) -> Path:
    path = Path(svc_home["SVC_WORK"]) / "chain.yaml"
    path.write_text(CHAIN)
    return path


def ended_sweep() -> int:
    """A completed one-cell sweep written straight to the store the server uses."""
    store = Store(SvcPaths.from_env().database_url)
    try:
        cell = runs.NewRun("old", "/old.yaml", {"x": 1}, {}, "local", None, [], [])
        new = repo.NewSweep("old", "/old.yaml", {"x": [1]}, {}, False, 4, "mcp", "local")
        sweep = store.call(repo.insert_sweep, new, [cell])
        assert sweep.id is not None
        [cell_id] = store.call(repo.cell_ids, sweep.id, ["pending"])
        store.call(runs.set_run_status, cell_id, "completed")
        store.call(repo.move_status, sweep.id, "pending", "completed")
        return sweep.id
    finally:
        store.close()


@pytest.mark.usefixtures("chain")
async def test_bad_steering_is_success_false(mcp_factory: Callable[[], Any]) -> None:
    ended = ended_sweep()
    async with mcp_factory() as mcp:
        missing = await mcp("steer_sweep", sweep_run_id=999, action="pause")
        assert missing == {"success": False, "error": "sweep run 999 not found"}
        done = await mcp("steer_sweep", sweep_run_id=ended, action="resume")
        assert done == {"success": False, "error": f"sweep run {ended} is already completed; nothing to resume"}
        unknown = await mcp("steer_sweep", sweep_run_id=ended, action="stop")
        assert unknown["success"] is False
        assert unknown["error"].startswith("steer_sweep: argument 'action': Input should be 'pause' or 'resume'")
        both = await mcp("run_workflow", yaml_path="chain.yaml", sweep={"matrix": {"x": [1]}, "fail_fast": True,
                                                                         "max_failures": 0})  # fmt: skip
        assert both["success"] is False
        assert both["error"].startswith("invalid sweep spec: give fail_fast or max_failures, not both")
    store = Store(SvcPaths.from_env().database_url)
    assert [sweep.id for sweep in store.call(repo.list_sweeps)] == [ended]  # nothing new was written
    store.close()


def held_jobs(store: Store, sweep_id: int) -> dict[str, str]:
    """squeue's reason for each of the sweep's queued jobs."""
    queued = store.call(steering.queued_jobs, sweep_id)
    if not queued:
        return {}
    argv = ["squeue", "--noheader", f"--jobs={','.join(queued)}", "--format=%i|%r"]
    shown = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30).stdout
    return dict(line.split("|", 1) for line in shown.splitlines() if line.strip())


@pytest.mark.cluster
@pytest.mark.usefixtures("chain", "slurm_cluster")
async def test_an_agent_pauses_and_resumes_the_sweep_its_run_workflow_waits_on(svc_home: dict[str, str]) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "svc_host", "mcp", "--root", svc_home["SVC_WORK"]],
        env=svc_home,
        cwd=svc_home["SVC_WORK"],
    )
    store = Store(SvcPaths.from_env().database_url)
    try:
        async with Client(params) as client:
            spec = {"matrix": {"x": [1, 2, 3]}, "max_parallel": 1, "max_failures": 1}
            messages: list[str] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                messages.append(message or "")

            running = asyncio.create_task(
                client.call_tool(
                    "run_workflow", {"yaml_path": "chain.yaml", "sweep": spec}, progress_callback=on_progress
                )
            )
            for _ in range(200):  # the first cell launched: its "then" job waits on "first"
                sweeps = store.call(repo.list_sweeps)
                if sweeps and sweeps[0].id is not None and store.call(steering.queued_jobs, sweeps[0].id):
                    break
                await asyncio.sleep(0.3)
            sweep_id = sweeps[0].id
            assert sweep_id is not None
            paused = await client.call_tool("steer_sweep", {"sweep_run_id": sweep_id, "action": "pause"})
            body = paused.structured_content
            assert body is not None
            assert (body["success"], body["paused"], body["cells_held"], body["max_failures"]) == (True, True, 1, 1)
            assert set(held_jobs(store, sweep_id).values()) == {"JobHeldUser"}
            told = f"sweep {sweep_id} running (paused, 1 held): "
            for _ in range(100):  # the waiting run_workflow tells its agent at once
                if any(message.startswith(told) for message in messages):
                    break
                await asyncio.sleep(0.1)
            assert any(message.startswith(told) for message in messages), messages
            resumed = await client.call_tool("steer_sweep", {"sweep_run_id": sweep_id, "action": "resume"})
            assert resumed.structured_content is not None
            assert (resumed.structured_content["paused"], resumed.structured_content["cells_held"]) == (False, 0)
            result = (await asyncio.wait_for(running, 120)).structured_content
        assert result is not None
        assert (result["status"], result["cells_completed"], result["paused"], result["error"]) == (
            "completed",
            3,
            False,
            None,
        )
    finally:
        store.close()
