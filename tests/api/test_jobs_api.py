"""REST "Jobs", "Resources" and "History" against the dev cluster, every status code the spec names."""

from __future__ import annotations

import asyncio
import os
import pwd
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
import pytest

from svc_host.domain.times import clock
from svc_host.host import Host
from svc_host.testing.waiting import DEADLINE, eventually

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("local_transport")]


def script(body: str) -> str:
    return f"#!/bin/bash\n#SBATCH --partition=debug\n{body}\n"


async def submit(client: httpx.AsyncClient, body: str, **extra: Any) -> dict[str, Any]:
    response = await client.post("/api/jobs", json={"script_content": script(body), **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


async def wait_for(
    client: httpx.AsyncClient, job_id: int, wanted: set[str], until: Callable[[dict[str, Any]], object] = bool
) -> dict[str, Any]:
    """The job's detail once its status is in ``wanted`` (and ``until`` holds for it); the dev node is shared by
    every test worker, so a job may wait minutes for a free slot before it runs."""

    async def detail() -> dict[str, Any]:
        return dict((await client.get(f"/api/jobs/{job_id}")).json())

    return await eventually(
        detail,
        until=lambda body: body["status"] in wanted and until(body),
        timeout=300,
        interval=0.5,
        what=f"job {job_id} {wanted}",
    )


async def test_submit_returns_201_pending_job(svc_api_client: httpx.AsyncClient, svc_paths: Any) -> None:
    body = await submit(svc_api_client, "echo hi", name="display", job_name="rest-job")
    assert set(body) == {"name", "job_id", "status", "depends_on", "command", "resources"}
    assert isinstance(body["job_id"], int)
    assert (body["name"], body["status"], body["depends_on"], body["resources"]) == ("rest-job", "PENDING", [], {})
    done = await wait_for(svc_api_client, body["job_id"], {"COMPLETED", "FAILED"})
    assert done["status"] == "COMPLETED"
    assert done["exit_code"] == 0
    assert [step["to"] for step in done["transitions"]][-1] == "COMPLETED"
    assert done["source"] == "web"


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        ({"name": "x"}, "body.script_content: Field required"),
        ({"script_content": ""}, "body.script_content: String should have at least 1 character"),
        ({"script_content": "true", "nodes": 2}, "body.nodes: Extra inputs are not permitted"),
    ],
)
async def test_submit_validation_is_422_detail(
    svc_api_client: httpx.AsyncClient, payload: dict[str, Any], detail: str
) -> None:
    response = await svc_api_client.post("/api/jobs", json=payload)
    assert response.status_code == 422
    assert response.json()["detail"] == detail


async def test_list_form_of_the_queue(svc_api_client: httpx.AsyncClient) -> None:
    job = await submit(svc_api_client, "sleep 60", job_name="listed")
    await wait_for(svc_api_client, job["job_id"], {"RUNNING"})
    listed = {row["job_id"]: row for row in (await svc_api_client.get("/api/jobs")).json()}
    row = listed[job["job_id"]]
    assert row["name"] == "listed"
    assert row["status"] == "RUNNING"
    assert row["partition"] == "debug"
    assert (row["nodes"], row["gpus"]) == (1, 0)
    assert row["resources"]["partition"] == "debug"
    hours, minutes, seconds = row["elapsed_time"].split(":")
    assert hours.isdigit()
    assert len(minutes) == len(seconds) == 2
    assert (await svc_api_client.delete(f"/api/jobs/{job['job_id']}")).status_code == 204


async def test_status_codes_of_job_paths(svc_api_client: httpx.AsyncClient) -> None:
    for method in ("get", "delete"):
        negative = await svc_api_client.request(method.upper(), "/api/jobs/-3")
        assert negative.status_code == 400
        assert negative.json() == {
            "detail": "job id must be a non-negative integer, or <id>_<index> for an array task"
            + (", or <id>_[a-b] for tasks of an array" if method == "delete" else "")
            + " (ids up to 4294967295), got '-3'"
        }
    assert (await svc_api_client.get("/api/jobs/-3/logs")).status_code == 400
    missing = await svc_api_client.get("/api/jobs/999999999")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "job 999999999 not found on transport 'local'"}
    assert (await svc_api_client.delete("/api/jobs/999999999")).status_code == 404
    assert (await svc_api_client.get("/api/jobs/abc")).status_code == 400
    assert (await svc_api_client.get(f"/api/jobs/{2**32}")).status_code == 400


async def test_cancel_is_204_then_422(svc_api_client: httpx.AsyncClient) -> None:
    job = await submit(svc_api_client, "sleep 120")
    response = await svc_api_client.delete(f"/api/jobs/{job['job_id']}")
    assert response.status_code == 204
    assert response.content == b""
    assert (await wait_for(svc_api_client, job["job_id"], {"CANCELLED"}))["raw_state"].startswith("CANCELLED")
    again = await svc_api_client.delete(f"/api/jobs/{job['job_id']}")
    assert again.status_code == 422
    assert "already ended" in again.json()["detail"]


async def test_logs_by_offset(svc_api_client: httpx.AsyncClient, svc_paths: Any) -> None:
    job = await submit(svc_api_client, "echo line-1; echo problem >&2; echo line-2")
    await wait_for(svc_api_client, job["job_id"], {"COMPLETED"})
    logs = (await svc_api_client.get(f"/api/jobs/{job['job_id']}/logs")).json()
    assert (logs["stdout"], logs["stderr"]) == ("line-1\nline-2\n", "problem\n")
    assert logs["stdout_offset"] == len("line-1\nline-2\n")
    tail = (await svc_api_client.get(f"/api/jobs/{job['job_id']}/logs", params={"stdout_offset": 7})).json()
    assert tail["stdout"] == "line-2\n"
    bad = await svc_api_client.get(f"/api/jobs/{job['job_id']}/logs", params={"stdout_offset": -1})
    assert bad.status_code == 422


async def test_resources_per_partition(svc_api_client: httpx.AsyncClient) -> None:
    snapshots = (await svc_api_client.get("/api/resources")).json()
    by_name = {snap["partition"]: snap for snap in snapshots}
    assert {"debug", "gpu"} <= set(by_name)
    gpu = by_name["gpu"]
    assert set(gpu) == {
        "timestamp",
        "partition",
        "total_gpus",
        "gpus_in_use",
        "gpus_available",
        "jobs_running",
        "nodes_total",
        "nodes_idle",
        "nodes_down",
        "gpu_utilization",
        "has_available_gpus",
        "gpu_types",  # added beside the spec's fields: GPUs per type (docs/interfaces.md)
        "shares_nodes_with",  # and the partitions holding its nodes too (their GPUs are these)
    }
    assert gpu["total_gpus"] == 4
    assert "debug" in gpu["shares_nodes_with"]  # the dev node is in debug and gpu
    assert [(t["type"], t["total"]) for t in gpu["gpu_types"]] == [(None, 4)]  # the dev cluster's GPUs are untyped
    only = (await svc_api_client.get("/api/resources", params={"partition": "gpu"})).json()
    assert [snap["partition"] for snap in only] == ["gpu"]
    assert (await svc_api_client.get("/api/resources", params={"partition": "nope"})).json() == []


async def test_resources_total_counts_a_node_in_two_partitions_once(svc_api_client: httpx.AsyncClient) -> None:
    # The dev cluster's one node (gpu:4) sits in both debug and gpu: summing the partitions says 8.
    partitions = (await svc_api_client.get("/api/resources")).json()
    assert sum(snap["total_gpus"] for snap in partitions if snap["partition"] in {"debug", "gpu"}) == 8
    answer = await svc_api_client.get("/api/resources/total")
    assert answer.status_code == 200, answer.text
    whole = answer.json()
    assert (whole["partition"], whole["total_gpus"]) == ("all", 4)
    assert whole["gpus_in_use"] + whole["gpus_available"] == 4
    assert [(t["type"], t["total"]) for t in whole["gpu_types"]] == [(None, 4)]


async def test_history_and_stats(svc_api_client: httpx.AsyncClient) -> None:
    ok = await submit(svc_api_client, "true", job_name="h-ok")
    bad = await submit(svc_api_client, "exit 4", job_name="h-bad")
    await wait_for(svc_api_client, ok["job_id"], {"COMPLETED"})
    await wait_for(svc_api_client, bad["job_id"], {"FAILED"})
    rows = (await svc_api_client.get("/api/history", params={"limit": 2})).json()
    assert [row["name"] for row in rows] == ["h-bad", "h-ok"]
    assert rows[0]["status"] == "FAILED"
    assert rows[0]["exit_code"] == 4
    assert rows[0]["source"] == "web"
    stats = (await svc_api_client.get("/api/history/stats", params={"from": "2000-01-01"})).json()
    assert stats["total"] == 2
    assert (stats["completed"], stats["failed"], stats["cancelled"]) == (1, 1, 0)
    assert stats["avg_runtime_seconds"] >= 0
    empty = (await svc_api_client.get("/api/history/stats", params={"to": "2000-01-01"})).json()
    unmeasured = {"jobs": 0, "measured": 0, "flagged": 0, "gpu_hours": 0.0}
    unmeasured |= {"cpu_percent": None, "memory_percent": None, "time_percent": None}
    nothing = {"total": 0, "completed": 0, "failed": 0, "cancelled": 0, "avg_runtime_seconds": 0.0}
    assert empty == nothing | {"efficiency": unmeasured}
    wrong = await svc_api_client.get("/api/history/stats", params={"from": "yesterday"})
    assert wrong.status_code == 400
    assert wrong.json() == {"detail": "'from' must be an ISO date such as 2026-11-22, got 'yesterday'"}


async def accounting_end(job_id: int) -> str:
    """The job's state and end as sacct prints them (``COMPLETED|2026-...``), straight from accounting."""
    argv = ["sacct", "--noheader", "--parsable2", "--allocations", "--format=State,End", f"--jobs={job_id}"]
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out.decode().strip()


async def test_a_job_that_ended_between_two_looks_gets_its_times_from_accounting(
    svc_api_client: httpx.AsyncClient, svc_test_host: Host
) -> None:
    job = await submit(svc_api_client, "#SBATCH --hold\nsleep 2", job_name="blink")
    job_id = job["job_id"]
    await svc_test_host.monitor.stop()  # nobody looks until the GET below: the job starts and ends unseen
    release = await asyncio.create_subprocess_exec("scontrol", "release", str(job_id))
    assert await release.wait() == 0
    await eventually(
        lambda: accounting_end(job_id),
        until=lambda line: line.partition("|")[0] == "COMPLETED" and line.partition("|")[2] not in {"", "Unknown"},
        interval=0.5,
        what=f"job {job_id}'s end in accounting",
    )

    body = (await svc_api_client.get(f"/api/jobs/{job_id}")).json()
    assert [step["to"] for step in body["transitions"]] == ["PENDING", "COMPLETED"]  # never seen RUNNING
    started, ended = datetime.fromisoformat(body["started_at"]), datetime.fromisoformat(body["ended_at"])
    ran = int((ended - started).total_seconds())
    assert 2 <= ran <= DEADLINE  # it slept 2 s (longer on a busy machine)
    assert body["elapsed_time"] == clock(ran)
    row = next(row for row in (await svc_api_client.get("/api/history")).json() if row["job_id"] == str(job_id))
    assert (row["started_at"], row["ended_at"]) == (body["started_at"], body["ended_at"])
    assert row["elapsed_seconds"] >= 2


async def test_an_ended_job_without_a_time_limit_says_unlimited(svc_api_client: httpx.AsyncClient) -> None:
    """The dev cluster's debug partition has no MaxTime: a job that asks for none runs UNLIMITED, and its detail
    says so after it ended too (it said nothing: the store kept "no limit" as unknown)."""
    body = await submit(svc_api_client, "sleep 1", name="no-limit")
    done = await wait_for(svc_api_client, body["job_id"], {"COMPLETED"}, lambda job: job["time_limit"])
    assert done["time_limit"] == "UNLIMITED", done


async def test_the_detail_names_who_cancelled_a_job_its_time_limit_and_its_node(
    svc_api_client: httpx.AsyncClient,
) -> None:
    """From sacct and scontrol: ``CANCELLED by <uid>`` read as the user's name, the limit and node Slurm gave it."""
    body = await submit(svc_api_client, "#SBATCH --time=5\nsleep 300", name="cancel-me")
    await wait_for(svc_api_client, body["job_id"], {"RUNNING"})
    assert (await svc_api_client.delete(f"/api/jobs/{body['job_id']}")).status_code == 204
    # accounting answers for the ended job a moment later (longer on a loaded machine)
    done = await wait_for(
        svc_api_client, body["job_id"], {"CANCELLED"}, lambda job: job["time_limit"] and job["cancelled_by"]
    )
    assert done["cancelled_by"] == pwd.getpwuid(os.getuid()).pw_name
    assert done["time_limit"] == "00:05:00", done
    assert done["node_list"]
