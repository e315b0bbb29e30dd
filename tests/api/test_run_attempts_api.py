"""REST run detail: every attempt of a run's jobs and why the next one was made (dev cluster)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from svc_host.host import Host
from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("local_transport")]

FLAKY = """\
name: flaky-rest
jobs:
  - name: hog
    command: python3 -c "x = b'1' * (400 << 20)"
    resources: {memory_per_node: 50M, time_limit: "5"}
    escalate: {memory: {factor: 10, max: 1G}}
  - {name: plain, command: "exit 3", depends_on: ["afterany:hog"]}
"""


@pytest.fixture
async def client(svc_api_client: httpx.AsyncClient, svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    yield svc_api_client
    await svc_test_host.close_services()


async def finished(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    async def shown() -> dict[str, Any]:
        return dict((await client.get(f"/api/workflows/runs/{run_id}")).json())

    ended = ("completed", "failed", "cancelled")
    return await eventually(
        shown, until=lambda body: body["status"] in ended, timeout=150, interval=0.5, what=f"the end of run {run_id}"
    )


async def test_the_run_detail_lists_every_attempt_with_its_end_and_reason(client: httpx.AsyncClient) -> None:
    uploaded = await client.post("/api/workflows/upload", json={"yaml": FLAKY, "filename": "flaky-rest.yaml"})
    assert uploaded.status_code == 200
    response = await client.post("/api/workflows/flaky-rest/run")
    assert response.status_code == 202, response.text
    run = response.json()
    body = await finished(client, run["id"])
    assert body["status"] == "failed"
    assert body["error"] == "job 'plain' ended FAILED (exit code 3)"
    hog_ids = [a["job_id"] for a in body["attempts"] if a["job"] == "hog"]
    assert body["job_ids"]["hog"] == hog_ids[-1]
    first, second, plain = body["attempts"]
    assert first == {
        "job": "hog",
        "attempt": 1,
        "job_id": hog_ids[0],
        "state": "OUT_OF_MEMORY",
        "exit_code": 0,
        "node": "localhost",
        "resources": {
            "nodes": 1,
            "gpus_per_node": 0,
            "cpus_per_task": 1,
            "memory_per_node": "50M",
            "time_limit": "5",
            "partition": None,
        },
        "elapsed_seconds": first["elapsed_seconds"],
        "submitted_at": first["submitted_at"],
        "ended_at": first["ended_at"],
        "reason": "OUT_OF_MEMORY: memory 50M -> 500M (x10, cap 1G)",
    }
    assert first["ended_at"] is not None
    assert first["elapsed_seconds"] is not None
    assert (second["attempt"], second["state"], second["resources"]["memory_per_node"], second["reason"]) == (
        2,
        "COMPLETED",
        "500M",
        None,
    )
    assert (plain["job"], plain["state"], plain["exit_code"], plain["reason"]) == (
        "plain",
        "FAILED",
        3,
        "FAILED: not retried (no 'retry' opted in)",
    )
    listed = (await client.get("/api/workflows/runs")).json()
    assert "attempts" not in listed[0]  # the list stays the spec's "Workflow run"
