"""N10 through a slurmctld restart: with ``sacct`` failing, a job that ended and an id slurmctld does not hold are
asked for before, during and after slurmctld is stopped and started again. Each answer is the job asked for, "not
found" or the scheduler's unavailability (502/503), never another job (a held job of the same user is in
slurmctld's listing throughout, the first candidate of the old fallback).

``outage`` (run alone, after the main run: it stops slurmctld, see tests/integration/test_outages.py). ``sacct``
fails through a wrapper first on the local transport's ``PATH``, so slurmdbd keeps running for the other tests.
Aging out past ``MinJobAge`` (300 s on the dev cluster) is the id never given here: to svc both are an id slurmctld
does not hold, and the same code answers them.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from svc_host.testing.fake import transport_plugin
from svc_host.testing.waiting import eventually
from svc_plugin_local.transport import LocalTransport
from tests.integration.test_outages import stopped

pytestmark = [pytest.mark.cluster, pytest.mark.outage, pytest.mark.slow]

BROKEN = "nosacct"
NEVER_GIVEN = "4000000000"
FAILING_SACCT = """#!/bin/sh
echo "sacct: error: Problem talking to the database: Connection refused" >&2
exit 1
"""


@pytest.fixture
def without_accounting(svc_register_plugin: Callable[..., None], slurm_cluster: None) -> Iterator[LocalTransport]:
    """This machine's Slurm as transport ``nosacct``, whose ``sacct`` always fails (a wrapper first on its PATH)."""
    directory = Path(f"/tmp/svc-nosacct-{uuid.uuid4().hex}")
    directory.mkdir(mode=0o755)
    (directory / "sacct").write_text(FAILING_SACCT)
    (directory / "sacct").chmod(0o755)
    transport = LocalTransport(env={"PATH": f"{directory}:{os.environ['PATH']}"})
    transport.name = BROKEN
    svc_register_plugin(transport_plugin(transport))
    yield transport
    shutil.rmtree(directory, ignore_errors=True)


async def test_through_a_slurmctld_restart_with_sacct_failing_no_answer_is_another_job(
    without_accounting: LocalTransport, sbatch_job: Callable[..., str], svc_api_client: httpx.AsyncClient
) -> None:
    ended = sbatch_job("-J", "asked", "--wrap", "true")
    held = sbatch_job("-J", "other", "--hold", "--wrap", "sleep 600")
    where = {"transport": BROKEN}
    assert (await without_accounting.run(["sacct", "--version"])).exit_code == 1

    async def answer(job_id: str) -> httpx.Response:
        return await svc_api_client.get(f"/api/jobs/{job_id}", params=where)

    async def ended_answered() -> httpx.Response | None:
        found = await answer(ended)
        return found if found.status_code == 200 and found.json()["status"] == "COMPLETED" else None

    def about_the_job_asked(job_id: str, found: httpx.Response) -> None:
        assert found.status_code in (200, 404, 502, 503), found.text
        if found.status_code == 200:
            assert str(found.json()["job_id"]) == job_id, found.text
        else:
            assert held not in found.text, found.text

    await eventually(ended_answered, what=f"job {ended} COMPLETED in GET /api/jobs/{ended}")
    assert (await answer(NEVER_GIVEN)).status_code == 404
    async with stopped("slurmctld"):
        for job_id in (ended, NEVER_GIVEN, held):
            about_the_job_asked(job_id, await answer(job_id))
            cancelled = await svc_api_client.delete(f"/api/jobs/{NEVER_GIVEN}", params=where)
            assert cancelled.status_code in (404, 502, 503), cancelled.text
    restarted = await eventually(ended_answered, what=f"job {ended} answered again after slurmctld's restart")
    assert restarted.json()["name"] == "asked"
    unknown = await answer(NEVER_GIVEN)
    assert unknown.status_code == 404, unknown.text
    assert (await svc_api_client.delete(f"/api/jobs/{NEVER_GIVEN}", params=where)).status_code == 404
    still = await answer(held)
    assert (still.status_code, still.json()["status"]) == (200, "PENDING")  # nobody else's job was touched
