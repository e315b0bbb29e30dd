"""REST "Sweep runs": starting a sweep through the run endpoint, list, detail, cells, cancel, and a single
cell's cancel through the workflow-run endpoint; every status code. Sweeps that run use the dev cluster."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from svc_host.host import Host
from svc_host.store import jobs as job_repo
from svc_host.store.tables import SweepRunRecord
from svc_host.sweeps import cell_moves
from svc_host.sweeps import store as repo
from svc_host.testing.waiting import eventually
from svc_host.workflows import run_status
from svc_host.workflows import store as runs

SWEEP_FIELDS = {
    "id", "name", "workflow_yaml_path", "status", "matrix", "args", "fail_fast", "max_parallel", "cell_count",
    "cells_pending", "cells_running", "cells_completed", "cells_failed", "cells_cancelled", "submission_source",
    "started_at", "completed_at", "cancel_requested_at", "error", "array_job_id", "queued", "max_failures",
    "cells_held", "paused_at", "transport", "cells_in_queue", "queue_reason",
}  # fmt: skip
CELL_FIELDS = {
    "id",
    "workflow_name",
    "status",
    "started_at",
    "completed_at",
    "args",
    "error",
    "triggered_by",
    "queued",
    "job_ids",
    "job_state",  # the cell's jobs' own state and times (a launched cell may be queued)
    "job_started_at",
    "job_ended_at",
}
GRID = """\
name: grid
args: {a: 0, b: none, pause: 0}
jobs:
  - {name: cell, command: "sleep {{ pause }}; echo {{ a }}{{ b }} > {{ a }}{{ b }}.txt"}
"""


@pytest.fixture
async def client(svc_api_client: httpx.AsyncClient, svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    await svc_api_client.post("/api/workflows/upload", json={"yaml": GRID, "filename": "grid.yaml"})
    yield svc_api_client
    await svc_test_host.close_services()
    live = [record.job_id for record in svc_test_host.store.call(job_repo.live_jobs) if record.transport == "local"]
    if live:  # only this test's jobs
        await asyncio.to_thread(subprocess.run, ["scancel", *live], check=False, timeout=60)


def finished_sweep(host: Host, name: str = "old") -> int:
    """A completed one-cell sweep written straight to the store (no cluster needed)."""
    cell = runs.NewRun(name, f"/{name}.yaml", {"a": 1}, {}, "local", None, [], [])
    new = repo.NewSweep(name, f"/{name}.yaml", {"a": [1]}, {"b": 2}, False, 4, "web", "local")
    sweep: SweepRunRecord = host.store.call(repo.insert_sweep, new, [cell])
    assert sweep.id is not None
    [cell_id] = host.store.call(repo.cell_ids, sweep.id, ["pending"])
    host.store.call(run_status.set_run_status, cell_id, "completed")
    host.store.call(cell_moves.move_status, sweep.id, "pending", "completed")
    return sweep.id


async def wait_for(client: httpx.AsyncClient, sweep_id: int, done: Any, timeout: float = 60) -> dict[str, Any]:
    async def shown() -> dict[str, Any]:
        return dict((await client.get(f"/api/sweep_runs/{sweep_id}")).json())

    return await eventually(shown, until=done, timeout=timeout, interval=0.25, what=f"sweep {sweep_id}'s awaited state")


# -- without the cluster --------------------------------------------------------------------------------------


async def test_list_detail_and_404s(client: httpx.AsyncClient, svc_test_host: Host) -> None:
    first, second = finished_sweep(svc_test_host, "first"), finished_sweep(svc_test_host, "second")
    listed = (await client.get("/api/sweep_runs")).json()
    assert [sweep["id"] for sweep in listed] == [second, first]  # newest first
    detail = await client.get(f"/api/sweep_runs/{first}")
    assert detail.status_code == 200
    body = detail.json()
    assert set(body) == SWEEP_FIELDS
    assert (body["name"], body["matrix"], body["args"], body["status"]) == ("first", {"a": [1]}, {"b": 2}, "completed")
    assert (body["cell_count"], body["cells_completed"], body["submission_source"]) == (1, 1, "web")
    assert body["started_at"].endswith("+00:00")
    for path in ("/api/sweep_runs/999", "/api/sweep_runs/abc", "/api/sweep_runs/-1", "/api/sweep_runs/999/cells"):
        response = await client.get(path)
        assert response.status_code == 404, path
        assert response.json()["detail"].startswith("sweep run "), path
    missing = await client.post("/api/sweep_runs/999/cancel")
    assert (missing.status_code, missing.json()) == (404, {"detail": "sweep run 999 not found"})
    ended = await client.post(f"/api/sweep_runs/{first}/cancel")
    assert ended.status_code == 422
    assert ended.json() == {"detail": f"sweep run {first} is already completed; nothing to cancel"}
    cells = (await client.get(f"/api/sweep_runs/{first}/cells")).json()
    assert [set(cell) for cell in cells] == [CELL_FIELDS]
    assert (cells[0]["status"], cells[0]["args"], cells[0]["triggered_by"]) == ("completed", {"a": 1}, "web")


async def test_the_list_stops_at_200(client: httpx.AsyncClient, svc_test_host: Host) -> None:
    ids = [finished_sweep(svc_test_host, f"s{index}") for index in range(201)]
    listed = (await client.get("/api/sweep_runs")).json()
    assert len(listed) == 200
    assert listed[0]["id"] == ids[-1]
    assert ids[0] not in {sweep["id"] for sweep in listed}


@pytest.mark.parametrize(
    ("sweep", "status", "detail"),
    [
        ({"matrix": [1, 2]}, 422, "sweep.matrix must be a mapping"),
        ({"matrix": {"a": [[1]]}}, 422, "invalid sweep spec: matrix: axis 'a' value 0 must be a string, number or"),
        ({"matrix": {"a": [1]}, "max_parallel": 0}, 422, "invalid sweep spec: max_parallel: Input should be greater"),
        (
            {"matrix": {"a": ["python:__import__('os')"]}},
            422,
            "sweep.matrix at 'a[0]' contains 'python:' prefix which is not allowed: 'python:__import__('os')'",
        ),
        (
            {"matrix": {"a": list(range(11)), "b": list(range(91))}},
            422,
            "invalid sweep spec: the matrix has 1001 cells; at most 1000 are allowed",
        ),
    ],
)
async def test_an_invalid_sweep_is_422_and_writes_nothing(
    client: httpx.AsyncClient, sweep: dict[str, Any], status: int, detail: str
) -> None:
    response = await client.post("/api/workflows/grid/run", json={"sweep": sweep})
    assert response.status_code == status
    assert response.json()["detail"].startswith(detail)
    assert (await client.get("/api/sweep_runs")).json() == []
    assert (await client.get("/api/workflows/runs")).json() == []


async def test_a_sweep_of_an_unknown_or_invalid_workflow(client: httpx.AsyncClient) -> None:
    missing = await client.post("/api/workflows/nothere/run", json={"sweep": {"matrix": {"a": [1]}}})
    assert (missing.status_code, missing.json()) == (404, {"detail": "workflow 'nothere' not found"})
    bad_args = await client.post(
        "/api/workflows/grid/run", json={"sweep": {"matrix": {"a": [1]}}, "args": {"b": "python:1"}}
    )
    assert bad_args.status_code == 422
    assert bad_args.json() == {"detail": "args at 'b' contains 'python:' prefix which is not allowed: 'python:1'"}
    assert (await client.get("/api/sweep_runs")).json() == []


# -- on the cluster -------------------------------------------------------------------------------------------


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_a_sweep_runs_and_its_cells_are_listed(client: httpx.AsyncClient) -> None:
    body = {"sweep": {"matrix": {"a": [1, 2], "b": ["x", "y"]}, "max_parallel": 2}, "args": {"pause": 0}}
    response = await client.post("/api/workflows/grid/run", json=body)
    assert response.status_code == 202, response.text
    started = response.json()
    assert set(started) == SWEEP_FIELDS
    assert (started["status"], started["cell_count"], started["cells_pending"]) == ("pending", 4, 4)
    assert (started["matrix"], started["args"], started["max_parallel"]) == (body["sweep"]["matrix"], {"pause": 0}, 2)
    assert (started["fail_fast"], started["submission_source"], started["name"]) == (False, "web", "grid")
    assert started["workflow_yaml_path"].endswith("grid.yaml")
    done = await wait_for(client, started["id"], lambda sweep: sweep["status"] == "completed")
    assert (done["cells_completed"], done["cells_pending"], done["completed_at"] is not None) == (4, 0, True)
    cells = (await client.get(f"/api/sweep_runs/{started['id']}/cells")).json()
    assert [cell["args"] for cell in cells] == [
        {"a": a, "b": b, "pause": 0} for a in (1, 2) for b in "xy"
    ]  # resolved args; all completed, so by started_at: the launch order, which is the matrix order
    assert {(cell["status"], cell["triggered_by"], cell["workflow_name"]) for cell in cells} == {
        ("completed", "web", "grid")
    }
    runs_of_sweep = (await client.get(f"/api/workflows/runs?sweep_id={started['id']}")).json()
    assert sorted(run["id"] for run in runs_of_sweep) == sorted(cell["id"] for cell in cells)


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_cancelling_cells_and_the_sweep(client: httpx.AsyncClient) -> None:
    body = {"sweep": {"matrix": {"a": [1, 2, 3, 4]}, "max_parallel": 1}, "args": {"pause": 60}}
    sweep_id = (await client.post("/api/workflows/grid/run", json=body)).json()["id"]
    # uniform cells: one job array, one task running at a time. The counters count a cell whose task is still
    # being submitted as running, so wait for the array's id, recorded once sbatch answered.
    await wait_for(client, sweep_id, lambda sweep: sweep["cells_running"] == 4 and sweep["array_job_id"])

    async def cells_shown() -> list[dict[str, Any]]:
        return list((await client.get(f"/api/sweep_runs/{sweep_id}/cells")).json())

    cells = await eventually(
        cells_shown,
        until=lambda cells: [cell["status"] for cell in cells] == ["running"] * 4,
        interval=0.25,
        what="4 cells running",
    )
    first, last = cells[0]["id"], cells[3]["id"]  # by started_at: task 0 (started) and task 3 (waiting its turn)

    queued = await client.post(f"/api/workflows/runs/{last}/cancel")
    assert queued.json() == {"status": "cancelled", "run_id": last}
    counted = (await client.get(f"/api/sweep_runs/{sweep_id}")).json()
    assert [counted[f"cells_{state}"] for state in ("pending", "running", "cancelled")] == [0, 3, 1]

    running = await client.post(f"/api/workflows/runs/{first}/cancel")  # Slurm gives its slot to the next task
    assert running.status_code == 200
    moved = await wait_for(client, sweep_id, lambda sweep: sweep["cells_running"] == 2)
    assert (moved["cells_cancelled"], moved["status"]) == (2, "running")

    cancelled = await client.post(f"/api/sweep_runs/{sweep_id}/cancel")
    assert cancelled.status_code == 202
    drained = cancelled.json()
    assert (drained["status"], drained["cells_pending"], drained["cells_cancelled"]) == ("draining", 0, 2)
    assert drained["cancel_requested_at"] is not None
    done = await wait_for(client, sweep_id, lambda sweep: sweep["status"] == "cancelled")
    assert (done["cells_cancelled"], done["cells_running"], done["cells_pending"]) == (4, 0, 0)
    again = await client.post(f"/api/sweep_runs/{sweep_id}/cancel")
    assert again.status_code == 202
    assert again.json() == done  # a no-op: the first cancel_requested_at is kept
    terminal = await client.post(f"/api/workflows/runs/{first}/cancel")
    assert terminal.status_code == 422

    async def job_statuses() -> set[str]:  # the cancelled jobs leave Slurm (and the monitor stops watching them)
        shown = (await client.get(f"/api/workflows/runs?sweep_id={sweep_id}")).json()
        return {status for run in shown for status in run["job_statuses"].values()}

    await eventually(
        job_statuses, until=lambda seen: seen == {"CANCELLED"}, interval=0.5, what="every job of the sweep cancelled"
    )


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_cells_an_array_keeps_queued_are_not_counted_as_running(client: httpx.AsyncClient) -> None:
    """Four cells sent as one array ``<id>_[0-3%1]``: Slurm runs one task and holds three (JobArrayTaskLimit);
    the sweep says "1 running · 3 queued (array limit)", not "running 4"."""
    body = {"sweep": {"matrix": {"a": [1, 2, 3, 4]}, "max_parallel": 1}, "args": {"pause": 60}}
    sweep_id = (await client.post("/api/workflows/grid/run", json=body)).json()["id"]
    shown = await wait_for(
        client,
        sweep_id,
        lambda sweep: sweep["cells_in_queue"] == 3 and sweep["queue_reason"] == "array limit",
        timeout=90,
    )
    assert (shown["cells_running"] - shown["cells_in_queue"], shown["cells_in_queue"]) == (1, 3)
    listed = next(s for s in (await client.get("/api/sweep_runs")).json() if s["id"] == sweep_id)
    assert (listed["cells_in_queue"], listed["queue_reason"]) == (3, "array limit")
    await client.post(f"/api/sweep_runs/{sweep_id}/cancel")
    await wait_for(client, sweep_id, lambda sweep: sweep["status"] == "cancelled", timeout=90)
