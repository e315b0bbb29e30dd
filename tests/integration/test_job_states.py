"""Jobs ending every way Slurm ends them, as REST, the CLI and MCP each report them (one shared store)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from svc_host.api.app import create_app
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.testing.http import asgi_client, security_for_tests
from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

OOM = "python3 -c 'import time; block = bytearray(600 * 1024 * 1024); time.sleep(5)'"


@pytest.fixture
async def rest(slurm_cluster: None) -> AsyncIterator[httpx.AsyncClient]:
    host = Host.create("web", plugins=create_plugin_manager(strict=True))
    async with asgi_client(create_app(host, security=security_for_tests())) as client:
        yield client
    await host.close()


async def submit(client: httpx.AsyncClient, name: str, body: str, directives: str = "") -> int:
    script = f"#!/bin/bash\n#SBATCH --job-name={name}\n{directives}{body}\n"
    response = await client.post("/api/jobs", json={"script_content": script})
    assert response.status_code == 201, response.text
    return int(response.json()["job_id"])


def cli_status(job_ids: list[int]) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "svc_host", "status", "--json", *map(str, job_ids)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return {row["job_id"]: row["state"] for row in json.loads(out)}


async def mcp_status(job_ids: list[int]) -> dict[str, str]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=dict(os.environ))
    async with Client(params) as client:
        found = {}
        for job_id in job_ids:
            result = (await client.call_tool("get_job_status", {"job_id": str(job_id)})).structured_content
            assert result is not None
            assert result["success"], result
            found[result["job_id"]] = result["status"]
        return found


async def test_every_ending_is_reported_alike_everywhere(rest: httpx.AsyncClient, dev_env: dict[str, str]) -> None:
    jobs = {
        "COMPLETED": await submit(rest, "ends-ok", "echo fine"),
        "FAILED": await submit(rest, "ends-failed", "exit 3"),
        "CANCELLED": await submit(rest, "ends-cancelled", "sleep 300"),
        "TIMEOUT": await submit(rest, "ends-timeout", "sleep 300", "#SBATCH --time=1\n"),
        "OUT_OF_MEMORY" if dev_env["SVC_DEV_CGROUP"] == "v1" else "FAILED-oom": await submit(
            rest, "ends-oom", OOM, "#SBATCH --mem=100M\n"
        ),
    }
    await asyncio.sleep(2)
    scancel = await asyncio.create_subprocess_exec("scancel", str(jobs["CANCELLED"]))  # from outside svc
    assert await scancel.wait() == 0

    expected = {str(job_id): wanted.split("-")[0] for wanted, job_id in jobs.items()}

    async def details() -> dict[str, Any]:
        return {str(job_id): (await rest.get(f"/api/jobs/{job_id}")).json() for job_id in jobs.values()}

    seen = await eventually(
        details,
        until=lambda seen: {job_id: body["status"] for job_id, body in seen.items()} == expected,
        timeout=150,  # TIMEOUT needs Slurm's own ~80 s
        interval=1,
        what="every job's ending",
    )
    assert seen[str(jobs["FAILED"])]["exit_code"] == 3
    assert seen[str(jobs["CANCELLED"])]["raw_state"].startswith("CANCELLED")

    ids = list(jobs.values())
    assert cli_status(ids) == expected
    assert await mcp_status(ids) == expected
    history = (await rest.get("/api/history", params={"limit": len(ids)})).json()
    assert {row["job_id"]: row["status"] for row in history} == expected
