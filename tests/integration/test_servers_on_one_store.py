"""Real svc processes on one store, on the dev cluster: ``svc serve``, ``svc mcp`` and CLI commands writing at
once, and two ``svc serve`` of which one is killed with -9 in the middle of a workflow and a sweep: the other
finishes both, every job submitted once. Every test runs on SQLite and on PostgreSQL (``SVC_DATABASE_URL``).

Everything runs as a user would start it (``python -m svc_host ...``), in the test's isolated home; every job
is short and cancelled at the end if still live (only jobs this test's store knows).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from sqlalchemy import func
from sqlmodel import Session, select

from svc_host.settings.paths import SvcPaths
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.store.tables import JobRecord, SweepRunRecord, WorkflowRunRecord
from svc_host.testing.serve import ServeProcess, start_serve
from svc_host.testing.waiting import eventually_blocking

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("slurm_cluster")]

TOKEN = "one-store-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PER_CLIENT = 8


@pytest.fixture(autouse=True)
def store_url(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every svc process of the test (servers, ``svc mcp``, the CLI) uses this store."""
    monkeypatch.setenv("SVC_DATABASE_URL", database_url)
    return database_url


class Servers:
    """``svc serve`` processes started by a test (stopped, and their live jobs cancelled, at its end)."""

    def __init__(self) -> None:
        self.started: list[ServeProcess] = []

    def start(self) -> tuple[str, subprocess.Popen[str]]:
        server = start_serve(env={"SVC_API_TOKEN": TOKEN})
        self.started.append(server)
        return server.base, server.process

    def stop(self) -> None:
        for server in self.started:
            server.stop(timeout=60)


@pytest.fixture
def servers() -> Iterator[Servers]:
    made = Servers()
    try:
        yield made
    finally:
        made.stop()
        store = Store(SvcPaths.from_env().database_url)
        live = [record.job_id for record in store.call(job_repo.live_jobs) if record.transport == "local"]
        store.close()
        if live:
            subprocess.run(["scancel", *live], check=False, timeout=60)


def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "svc_host", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


async def test_serve_mcp_and_cli_write_at_once_and_lose_nothing(servers: Servers, tmp_path: Path) -> None:
    base, server = servers.start()
    script = "#!/bin/bash\n#SBATCH --partition=debug\ntrue\n"

    async def rest(client: httpx.AsyncClient, n: int) -> None:
        response = await client.post("/api/jobs", json={"script_content": script, "name": f"rest-{n}"})
        assert response.status_code == 201, response.text

    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=dict(os.environ))
    async with Client(params) as mcp, httpx.AsyncClient(base_url=base, headers=AUTH, timeout=60) as client:

        async def tool(n: int) -> None:
            result = await mcp.call_tool(
                "submit_job", {"command": "true", "name": f"mcp-{n}", "log_dir": str(tmp_path)}
            )
            assert result.structured_content is not None
            assert result.structured_content["success"], result.structured_content

        commands = [
            cli("submit", "--name", f"cli-{n}", "--log-dir", str(tmp_path), "--", "true") for n in range(PER_CLIENT)
        ]
        await asyncio.gather(*(rest(client, n) for n in range(PER_CLIENT)), *(tool(n) for n in range(PER_CLIENT)))
        for command in commands:
            _, err = await asyncio.to_thread(command.communicate, timeout=120)
            assert command.returncode == 0, err
            assert "database is locked" not in err
        history = (await client.get("/api/history", params={"limit": 100})).json()
    by_source = Counter(row["name"].split("-")[0] for row in history)
    assert by_source == {"rest": PER_CLIENT, "mcp": PER_CLIENT, "cli": PER_CLIENT}
    server.terminate()
    _, err = server.communicate(timeout=60)
    assert "database is locked" not in err
    assert "Traceback" not in err


CHAIN = """\
name: chain
jobs:
  - {name: first, command: "sleep 4; echo first >> chain.txt"}
  - {name: second, command: "echo second >> chain.txt", depends_on: [first]}
"""
GRID = """\
name: grid
args: {x: 0}
jobs:
  - {name: cell, command: "sleep 3; echo {{ x }} >> grid.txt"}
"""


def wait_for(client: httpx.Client, path: str, done: Any, timeout: float = 120) -> dict[str, Any]:
    return eventually_blocking(
        lambda: dict(client.get(path).json()), until=done, timeout=timeout, interval=0.3, what=f"{path}'s awaited state"
    )


def rows(store_url: str) -> tuple[int, int, int]:
    store = Store(store_url)
    try:
        return store.call(_counts)
    finally:
        store.close()


def _counts(session: Session) -> tuple[int, int, int]:
    return (
        session.exec(select(func.count()).select_from(JobRecord)).one(),
        session.exec(select(func.count()).select_from(WorkflowRunRecord)).one(),
        session.exec(select(func.count()).select_from(SweepRunRecord)).one(),
    )


def test_of_two_servers_one_killed_with_9_mid_workflow_and_mid_sweep_the_other_finishes_both(
    servers: Servers, store_url: str
) -> None:
    work = Path.cwd()
    base, first = servers.start()
    other, _ = servers.start()
    with httpx.Client(base_url=base, headers=AUTH, timeout=60) as client:
        for name, text in (("chain.yaml", CHAIN), ("grid.yaml", GRID)):
            assert client.post("/api/workflows/upload", json={"yaml": text, "filename": name}).is_success
        run = client.post("/api/workflows/chain/run").json()
        sweep = client.post(
            "/api/workflows/grid/run", json={"sweep": {"matrix": {"x": [1, 2, 3, 4]}, "max_parallel": 2}}
        )
        assert sweep.status_code == 202, sweep.text
        sweep_id = sweep.json()["id"]
        wait_for(client, f"/api/sweep_runs/{sweep_id}", lambda body: body["cells_running"] == 2, timeout=60)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    before = rows(store_url)
    assert before[1:] == (5, 1)  # the run and the 4 cells, the sweep

    with httpx.Client(base_url=other, headers=AUTH, timeout=60) as client:  # it takes over what the first drove
        ended = ("completed", "failed", "cancelled")
        done_run = wait_for(client, f"/api/workflows/runs/{run['id']}", lambda body: body["status"] in ended)
        done_sweep = wait_for(client, f"/api/sweep_runs/{sweep_id}", lambda body: body["status"] in ended)
    assert done_run["status"] == "completed", done_run
    assert done_run["job_statuses"] == {"first": "COMPLETED", "second": "COMPLETED"}
    counts = [done_sweep[key] for key in ("cells_pending", "cells_running", "cells_completed", "cells_failed")]
    assert (done_sweep["status"], counts) == ("completed", [0, 0, 4, 0]), done_sweep
    after = rows(store_url)
    assert after == (6, 5, 1)  # 2 + 4 jobs, each submitted once; no row lost
    assert (work / "chain.txt").read_text() == "first\nsecond\n"
    assert sorted((work / "grid.txt").read_text().split()) == ["1", "2", "3", "4"]


async def test_svc_mcp_closes_its_engine_and_releases_its_runs_when_it_exits(servers: Servers) -> None:
    """The Host closes the services it owns in ``svc mcp`` too: a run started there is handed over at once."""
    (Path.cwd() / "slow.yaml").write_text("name: slow\njobs:\n  - {name: a, command: 'sleep 30'}\n")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "svc_host", "mcp", "--root", "."], env=dict(os.environ)
    )
    url = SvcPaths.from_env().database_url
    async with Client(params) as mcp:
        result = await mcp.call_tool("run_workflow", {"yaml_path": "slow.yaml", "wait_seconds": 0})
        assert result.structured_content is not None
        run_id = result.structured_content["run_id"]
        assert (await asyncio.to_thread(run_row, url, run_id)).owner is not None
    run = await asyncio.to_thread(run_row, url, run_id)
    assert (run.status, run.owner, run.lease_until) == ("running", None, None)


def run_row(url: str, run_id: str) -> WorkflowRunRecord:
    store = Store(url)
    try:
        found = store.call(lambda session: session.get(WorkflowRunRecord, run_id))
        assert found is not None
        return found
    finally:
        store.close()
