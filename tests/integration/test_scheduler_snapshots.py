"""On the dev cluster: concurrent ``GET /api/jobs`` and ``GET /api/resources`` cost the scheduler one query."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx
import pytest

import svc_plugin_local.hooks
from svc_host.host import Host
from svc_host.runtime.snapshots import MAX_AGE
from svc_host.transports.base import CommandResult
from tests.conftest import LoopClock

pytestmark = pytest.mark.cluster


@pytest.fixture
def local(svc_register_plugin: Callable[..., None], slurm_cluster: None) -> None:
    svc_register_plugin(svc_plugin_local.hooks, "local", distribution="svc", version="0")


@pytest.fixture
def commands(local: None, svc_test_host: Host) -> list[str]:
    """The name of every command the server's ``local`` transport runs."""
    transport = svc_test_host.transports.get("local")
    real = transport.run  # type: ignore[attr-defined]
    seen: list[str] = []

    async def counted(argv: Sequence[str], **kwargs: Any) -> CommandResult:
        seen.append(argv[0])
        result: CommandResult = await real(argv, **kwargs)
        return result

    transport.run = counted  # type: ignore[attr-defined]
    return seen


@pytest.fixture
def held_job() -> Iterator[str]:
    """A job held in the queue (pending, holding nothing), submitted with plain sbatch: svc does not track it."""
    job_id = subprocess.run(
        ["sbatch", "--parsable", "--hold", "--job-name=snapshot-held", "--wrap=true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    yield job_id
    subprocess.run(["scancel", job_id], check=False)


async def test_fifty_concurrent_job_lists_cost_one_squeue(
    commands: list[str], held_job: str, svc_api_client: httpx.AsyncClient, svc_test_host: Host, loop_clock: LoopClock
) -> None:
    assert svc_test_host.transports.snapshots.max_age == MAX_AGE  # a second, unless a test sets otherwise:
    svc_test_host.transports.snapshots.max_age = (
        60  # nothing expires while the fifty are served, however busy the machine
    )
    asked = loop_clock.time()
    responses = await asyncio.gather(*(svc_api_client.get("/api/jobs") for _ in range(50)))
    served = loop_clock.time() - asked + 0.001  # the header rounds to a millisecond
    assert [response.status_code for response in responses] == [200] * 50
    assert commands == ["squeue"]
    for response in responses:
        assert int(held_job) in {job["job_id"] for job in response.json()}
        assert 0 <= float(response.headers["X-Svc-Snapshot-Age"]) <= served  # taken after they asked
    assert len({response.content for response in responses}) == 1  # everybody saw the same snapshot

    loop_clock.advance(61)  # older than max_age: the next list asks the scheduler again
    asked = loop_clock.time()
    again = await svc_api_client.get("/api/jobs")
    assert again.status_code == 200
    assert float(again.headers["X-Svc-Snapshot-Age"]) <= loop_clock.time() - asked + 0.001
    assert commands == ["squeue", "squeue"]


async def test_concurrent_resource_views_cost_one_sinfo(commands: list[str], svc_api_client: httpx.AsyncClient) -> None:
    responses = await asyncio.gather(*(svc_api_client.get("/api/resources") for _ in range(30)))
    assert [response.status_code for response in responses] == [200] * 30
    assert sorted(commands) == ["sinfo", "squeue"]
    assert {"debug", "gpu"} <= {snap["partition"] for snap in responses[0].json()}
    assert "X-Svc-Snapshot-Age" in responses[0].headers
