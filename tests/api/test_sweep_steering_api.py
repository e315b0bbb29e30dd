"""REST steering of sweeps: ``POST /api/sweep_runs/{id}/pause`` and ``/resume`` (200, 404, 409), the sweep spec's
``max_failures`` (422 with ``fail_fast``), and the routes declared in OpenAPI. The paused sweep runs on the dev
cluster."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from svc_host.host import Host
from svc_host.store import jobs as job_repo
from tests.api.test_sweeps_api import SWEEP_FIELDS, finished_sweep, wait_for

NAP = """\
name: nap
args: {x: 0}
jobs:
  - {name: first, command: "sleep 3"}
  - {name: then, command: "echo {{ x }}", depends_on: [first]}
"""


@pytest.fixture
async def client(svc_api_client: httpx.AsyncClient, svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    await svc_api_client.post("/api/workflows/upload", json={"yaml": NAP, "filename": "nap.yaml"})
    yield svc_api_client
    await svc_test_host.close_services()
    live = [record.job_id for record in svc_test_host.store.call(job_repo.live_jobs) if record.transport == "local"]
    if live:  # only this test's jobs
        await asyncio.to_thread(subprocess.run, ["scancel", *live], check=False, timeout=60)


@pytest.mark.parametrize("action", ["pause", "resume"])
async def test_unknown_and_ended_sweeps(client: httpx.AsyncClient, svc_test_host: Host, action: str) -> None:
    ended = finished_sweep(svc_test_host)
    for path in (f"/api/sweep_runs/999/{action}", f"/api/sweep_runs/abc/{action}"):
        missing = await client.post(path)
        assert missing.status_code == 404, path
        assert missing.json()["detail"].startswith("sweep run ")
    conflict = await client.post(f"/api/sweep_runs/{ended}/{action}")
    assert conflict.status_code == 409
    assert conflict.json() == {"detail": f"sweep run {ended} is already completed; nothing to {action}"}
    assert (await client.get(f"/api/sweep_runs/{ended}")).json()["paused_at"] is None


@pytest.mark.parametrize(
    ("sweep", "detail"),
    [
        (
            {"matrix": {"x": [1]}, "fail_fast": True, "max_failures": 1},
            "invalid sweep spec: give fail_fast or max_failures, not both",
        ),
        ({"matrix": {"x": [1]}, "max_failures": -1}, "invalid sweep spec: max_failures: Input should be greater"),
        ({"matrix": {"x": [1]}, "max_failures": "2"}, "invalid sweep spec: max_failures: Input should be a valid"),
    ],
)
async def test_a_bad_failure_budget_is_422_and_writes_nothing(
    client: httpx.AsyncClient, sweep: dict[str, Any], detail: str
) -> None:
    response = await client.post("/api/workflows/nap/run", json={"sweep": sweep})
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail)
    assert (await client.get("/api/sweep_runs")).json() == []


async def test_pause_and_resume_are_in_openapi(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    for action in ("pause", "resume"):
        operation = paths[f"/api/sweep_runs/{{sweep_id}}/{action}"]["post"]
        assert {"200", "404", "409"} <= set(operation["responses"])


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_pause_then_resume_a_running_sweep(client: httpx.AsyncClient) -> None:
    body = {"sweep": {"matrix": {"x": [1, 2, 3]}, "max_parallel": 1, "max_failures": 1}}
    started = await client.post("/api/workflows/nap/run", json=body)
    assert started.status_code == 202, started.text
    assert set(started.json()) == SWEEP_FIELDS
    assert (started.json()["max_failures"], started.json()["paused_at"]) == (1, None)
    sweep_id = started.json()["id"]
    await wait_for(client, sweep_id, lambda sweep: sweep["cells_running"] == 1)
    paused = await client.post(f"/api/sweep_runs/{sweep_id}/pause")
    assert paused.status_code == 200
    assert paused.json()["paused_at"] is not None
    assert (paused.json()["status"], paused.json()["cells_pending"]) == ("running", 2)
    again = await client.post(f"/api/sweep_runs/{sweep_id}/pause")
    assert (again.status_code, again.json()["paused_at"]) == (200, paused.json()["paused_at"])
    listed = (await client.get("/api/sweep_runs")).json()
    assert [sweep["paused_at"] for sweep in listed] == [paused.json()["paused_at"]]
    resumed = await client.post(f"/api/sweep_runs/{sweep_id}/resume")
    assert resumed.status_code == 200
    assert (resumed.json()["paused_at"], resumed.json()["cells_held"]) == (None, 0)
    done = await wait_for(client, sweep_id, lambda sweep: sweep["status"] == "completed", timeout=90)
    assert done["cells_completed"] == 3
