"""Efficiency on the dev cluster: a job that asks for far more than it uses is flagged with the right
suggestions through REST, MCP (the real client over stdio) and the CLI; a workflow run's and a sweep's
aggregates. Accounting is real (slurmdbd); the usage is read by svc's monitor when the jobs end."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from svc_host.api.app import create_app
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.store import jobs as job_repo
from svc_host.testing.http import asgi_client, security_for_tests
from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PROBE = """\
import time
block = bytearray(100 * 1024 * 1024)
for i in range(0, len(block), 4096):
    block[i] = 1
end = time.time() + 6
while time.time() < end:
    pass
"""
"""One core busy for 6 s holding 100 MB."""
OVERASK = "#SBATCH --job-name=overask\n#SBATCH --mem=2G\n#SBATCH --cpus-per-task=4\n#SBATCH --time=10\n"
WORKFLOW = """\
name: effwf
args: {mb: 40}
jobs:
  - name: load
    command: >-
      python3 -c 'import time; block = b"x" * ({{ mb }} << 20); time.sleep(6)'
    resources: {memory_per_node: 2G, cpus_per_task: 2, time_limit: "0:10:00"}
  - name: after
    depends_on: [load]
    command: "sleep 1"
    resources: {memory_per_node: 1G, time_limit: "0:10:00"}
"""


@pytest.fixture
async def rest(slurm_cluster: None) -> AsyncIterator[tuple[httpx.AsyncClient, Host]]:
    host = Host.create("web", plugins=create_plugin_manager(strict=True))
    async with asgi_client(create_app(host, security=security_for_tests())) as client:
        yield client, host
    await host.close_services()
    live = [record.job_id for record in host.store.call(job_repo.live_jobs) if record.transport == "local"]
    if live:  # only this test's jobs
        await asyncio.to_thread(subprocess.run, ["scancel", *live], check=False, timeout=60)
    await host.close()


async def measured(client: httpx.AsyncClient, path: str, done: Any, timeout: float = 120) -> dict[str, Any]:
    """GET ``path`` until ``done(body)``; the monitor reads usage in the tick that sees a job end."""

    async def body() -> dict[str, Any]:
        response = await client.get(path)
        assert response.status_code == 200, response.text
        return dict(response.json())

    return await eventually(body, until=done, timeout=timeout, interval=0.5, what=f"the awaited answer of {path}")


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "svc_host", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


async def mcp_call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=dict(os.environ))
    async with Client(params) as client:
        called = await client.call_tool(tool, arguments)
    result = called.structured_content
    assert result is not None, called
    return result


def check_overask_suggestions(efficiency: dict[str, Any]) -> None:
    messages = {flag["resource"]: flag["message"] for flag in efficiency["suggestions"]}
    assert set(messages) == {"cpu", "memory", "time"}
    assert re.fullmatch(r"asked 4 CPUs, used (0\.\d|1\.0) on average: ask for [12]", messages["cpu"])
    memory = re.fullmatch(r"asked 2G, peaked at \d+(\.\d)?[KM]: ask for (\d+)M", messages["memory"])
    assert memory is not None, messages["memory"]
    assert 64 <= int(memory[2]) <= 256
    assert re.fullmatch(r"asked 10m, ran \d+s: ask for 5m", messages["time"])
    assert efficiency["cpu"]["allocated"] == 4
    assert efficiency["memory"]["allocated_bytes"] == 2 * 1024**3
    assert efficiency["time"]["limit_seconds"] == 600
    assert efficiency["gpus"] == {"allocated": 0, "utilisation_percent": None, "note": None}


async def test_a_job_asking_far_more_than_it_uses_is_flagged_everywhere(
    rest: tuple[httpx.AsyncClient, Host], work: Path
) -> None:
    client, _ = rest
    (work / "probe.py").write_text(PROBE)
    script = f"#!/bin/bash\n{OVERASK}python3 {work / 'probe.py'}\n"
    response = await client.post("/api/jobs", json={"name": "overask", "script_content": script})
    assert response.status_code == 201, response.text
    job_id = str(response.json()["job_id"])

    await measured(client, f"/api/jobs/{job_id}", lambda job: job["status"] == "COMPLETED")
    path = f"/api/history/efficiency/jobs/{job_id}"
    view = await measured(client, path, lambda body: body["efficiency"] is not None)
    assert (view["status"], view["name"], view["not_measured_reason"]) == ("COMPLETED", "overask", None)
    check_overask_suggestions(view["efficiency"])
    [record] = [row for row in (await client.get("/api/history")).json() if row["job_id"] == job_id]
    assert record["efficiency"] == view["efficiency"]
    stats = (await client.get("/api/history/stats")).json()
    assert stats["efficiency"]["flagged"] >= 1
    assert stats["efficiency"]["measured"] >= 1

    cli = svc("eff", job_id)
    assert cli.returncode == 0, cli.stderr
    assert f"job {job_id} (overask) COMPLETED" in cli.stdout
    assert "suggest: asked 4 CPUs, used" in cli.stdout
    assert "suggest: asked 2G, peaked at" in cli.stdout
    assert json.loads(svc("eff", job_id, "--json").stdout)["efficiency"] == view["efficiency"]
    table = svc("history", "--efficiency", "-n", "5")
    assert "overask" in table.stdout
    assert "asked 10m, ran" in table.stdout

    status = await mcp_call("get_job_status", {"job_id": job_id})
    assert status["success"], status
    check_overask_suggestions(status["efficiency"])
    direct = await mcp_call("get_efficiency", {"job_id": job_id})
    assert direct["success"], direct
    assert direct["efficiency"] == view["efficiency"]


async def test_a_running_job_is_not_measured_yet_and_bad_ids_are_refused(rest: tuple[httpx.AsyncClient, Host]) -> None:
    client, _ = rest
    response = await client.post("/api/jobs", json={"script_content": "#!/bin/bash\nsleep 120\n"})
    job_id = str(response.json()["job_id"])
    view = (await client.get(f"/api/history/efficiency/jobs/{job_id}")).json()
    assert (view["efficiency"], view["not_measured_reason"]) == (None, "the job has not ended yet")
    assert (await client.get("/api/history/efficiency/jobs/999999999")).status_code == 404
    assert (await client.get("/api/history/efficiency/jobs/12;ls")).status_code == 400  # a malformed job id
    assert (await client.get("/api/history/efficiency/runs/nope")).status_code == 404
    assert (await client.get("/api/history/efficiency/sweeps/0")).status_code == 422
    refused = await mcp_call("get_efficiency", {"job_id": job_id, "run_id": "x"})
    assert refused == {
        "success": False,
        "error": "give exactly one of job_id, run_id or sweep_run_id (got job_id, run_id)",
    }
    missing = await mcp_call("get_efficiency", {"sweep_run_id": 987654})
    assert missing == {"success": False, "error": "sweep 987654 not found"}
    cli = svc("eff", "--run", "nope")
    assert (cli.returncode, cli.stderr.strip()) == (1, "error: workflow run 'nope' not found")
    both = svc("eff", job_id, "--sweep", "3")
    assert both.returncode == 2
    assert "give exactly one of JOB_ID, --run RUN_ID or --sweep SWEEP_ID" in both.stderr


async def test_run_and_sweep_aggregates(rest: tuple[httpx.AsyncClient, Host]) -> None:
    client, _ = rest
    uploaded = await client.post("/api/workflows/upload", json={"yaml": WORKFLOW, "filename": "effwf.yaml"})
    assert uploaded.status_code in (200, 201), uploaded.text
    run = await client.post("/api/workflows/effwf/run", json={})
    assert run.status_code == 202, run.text
    run_id = run.json()["id"]
    sweep = await client.post("/api/workflows/effwf/run", json={"sweep": {"matrix": {"mb": [20, 60]}}})
    assert sweep.status_code == 202, sweep.text
    sweep_id = sweep.json()["id"]

    run_view = await measured(client, f"/api/history/efficiency/runs/{run_id}", lambda b: b["summary"]["measured"] == 2)
    assert [job["workflow_job"] for job in run_view["jobs"]] == ["load", "after"]
    summary = run_view["summary"]
    assert (summary["jobs"], summary["measured"], summary["flagged"]) == (2, 2, 2)  # 10 minutes asked, seconds used
    assert 0 < summary["memory_percent"] < 10
    assert 0 < summary["time_percent"] < 5
    load = run_view["jobs"][0]["efficiency"]
    assert load["cpu"]["allocated"] == 2
    assert any(flag["message"].startswith("asked 2G, peaked at") for flag in load["suggestions"])

    sweep_view = await measured(
        client, f"/api/history/efficiency/sweeps/{sweep_id}", lambda b: b["summary"]["measured"] == 4
    )
    assert len({job["run_id"] for job in sweep_view["jobs"]}) == 2
    assert sweep_view["summary"]["jobs"] == 4
    peaks = sorted(
        job["efficiency"]["memory"]["peak_bytes"] for job in sweep_view["jobs"] if job["workflow_job"] == "load"
    )
    assert peaks[1] > peaks[0]  # the 60 MB cell peaked above the 20 MB one

    cli = svc("eff", "--sweep", str(sweep_id))
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.startswith("4 ended job(s), 4 measured, 4 flagged: cpu ")
    agent = await mcp_call("get_efficiency", {"run_id": run_id})
    assert agent["success"], agent
    assert agent["summary"] == summary


async def test_usage_over_ssh(dev_host: Host) -> None:
    """The SSH transport reads an ended job's usage with one sacct quoted across SSH, on either dev cluster."""
    transport = dev_host.transport("dev")
    sbatch = ["sbatch", "--parsable", "-o", "/dev/null", "-c", "2", "--mem=1500M", "--wrap", "sleep 1"]
    job_id = (await transport.check(sbatch, idempotent=False)).strip().split(";")[0]  # type: ignore[attr-defined]
    try:
        usage = (await usage_once_ended(dev_host, "dev", job_id))[job_id]
        assert (usage.cpus, usage.mem_bytes, usage.gpus) == (2, 1500 * 1024**2, 0)
        assert usage.elapsed_seconds is not None
        assert usage.cpu_seconds is not None
    finally:
        await transport.cancel([job_id])
        await dev_host.transports.close()


@pytest.mark.local_slurm
async def test_usage_over_ssh_is_the_same_query_as_local(dev_host: Host) -> None:
    """On this machine's own cluster, the SSH transport's sacct reads exactly what the local one reads."""
    sbatch = ["sbatch", "--parsable", "-o", "/dev/null", "-c", "2", "--mem=1500M", "--wrap", "sleep 1"]
    submitted = await asyncio.to_thread(subprocess.run, sbatch, capture_output=True, text=True, check=True, timeout=60)
    job_id = submitted.stdout.strip().split(";")[0]
    try:
        # Accounting settles a fast job's record in steps (its Timelimit can be empty for a moment after the job
        # ended), so the two reads are taken side by side until the record holds still; a transport that reads
        # differently never agrees and fails here after the minute.
        reads = await eventually(
            lambda: asyncio.gather(
                dev_host.transport("dev").usage([job_id]), dev_host.transport("local").usage([job_id])
            ),
            until=lambda reads: job_id in reads[0] and reads[0] == reads[1],
            interval=0.5,
            what=f"the SSH and local reads of job {job_id}'s usage agreeing",
        )
        assert reads[0][job_id].cpus == 2
    finally:
        await asyncio.to_thread(subprocess.run, ["scancel", job_id], check=False, timeout=60)
        await dev_host.transports.close()


async def usage_once_ended(host: Host, transport: str, job_id: str) -> dict[str, Any]:
    """``usage([job_id])`` once accounting reports the job ended (within a minute)."""
    return await eventually(
        lambda: host.transport(transport).usage([job_id]),
        until=lambda found: job_id in found,
        interval=0.5,
        what=f"accounting reporting job {job_id} ended",
    )
