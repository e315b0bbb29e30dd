"""The reviewer's N10 on the real cluster: with ``sacct`` failing (as while slurmdbd is down), an id slurmctld does
not hold (never given, or a real job aged out past ``MinJobAge``) was answered with the first job of ``scontrol
show job``'s whole listing, another job of the same user here: ``GET /api/jobs/{id}`` showed it, ``DELETE``
answered for it and MCP's ``get_job_logs`` read its stdout. Now every face answers "not found", or the job asked
for.

No shared daemon is stopped: the transport's profile puts a ``sacct`` that fails first on the cluster's ``PATH``
(the way tests/integration/test_ssh_transport.py wraps ``sbatch``), over SSH, so the test runs on Slurm 22.05 and,
with ``SVC_TEST_SLURM=24.11``, on lab24 (``SLURM24_TESTS`` in the Makefile).
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from mcp import Client

from svc_host.domain.jobs import JobState
from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.slurm.argv import scontrol_show_job_argv
from svc_host.slurm.parse import parse_scontrol_jobs
from svc_host.testing.fake import transport_plugin
from svc_host.testing.waiting import eventually, wait_for_state
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster

BROKEN = "nosacct"
NEVER_GIVEN = "4000000000"
"""Past Slurm's largest job id (``MaxJobId``, 67043328 at most): slurmctld never held it."""
FAILING_SACCT = """#!/bin/sh
echo "sacct: error: Problem talking to the database: Connection refused" >&2
exit 1
"""
ENDED_JOBS_ARGV = ("sacct", "-a", "-X", "-n", "-P", "--state=CD", "-S", "now-30days", "-E", "now", "-o", "JobID")
"""Every user's completed jobs of the last 30 days (with ``--state``, sacct's end defaults to the start: ``-E now``);
every user's, so that early in a run on a fresh cluster root's local jobs count too."""
PURGE_PASS = 120.0
"""Seconds past ``MinJobAge`` by which slurmctld has dropped an ended job: it purges old jobs once a minute."""


@pytest.fixture
def failing_sacct(dev_profile: SSHProfile, cluster_path: Callable[[str], Path]) -> Iterator[SSHProfile]:
    """The dev profile with a ``sacct`` that always fails first on its ``PATH`` (in the cluster's /tmp)."""
    remote = f"/tmp/svc-nosacct-{uuid.uuid4().hex}"
    directory = cluster_path(remote)
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    wrapper = directory / "sacct"
    wrapper.write_text(FAILING_SACCT)
    wrapper.chmod(0o755)
    yield dev_profile.model_copy(update={"env_vars": {"PATH": f"{remote}:/usr/local/bin:/usr/bin:/bin"}})
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
async def healthy(dev_profile: SSHProfile) -> AsyncIterator[SSHTransport]:
    transport = SSHTransport("dev", dev_profile)
    yield transport
    await transport.close()


@pytest.fixture
async def broken(failing_sacct: SSHProfile, svc_register_plugin: Callable[..., None]) -> SSHTransport:
    """The cluster through the failing ``sacct``, offered to the test's host as transport ``nosacct`` (the host
    closes it)."""
    transport = SSHTransport(BROKEN, failing_sacct)
    svc_register_plugin(transport_plugin(transport))
    return transport


@pytest.fixture
async def two_jobs(healthy: SSHTransport) -> AsyncIterator[tuple[str, str]]:
    """A job that ended (its stdout names it) and a held one of the same user, cancelled afterwards."""
    job_dir = f"svc-n10-{uuid.uuid4().hex[:8]}"
    ended = await healthy.submit(
        render_sbatch(JobDefinition(name="asked", command='echo "output of $SLURM_JOB_ID"', log_dir=job_dir))
    )
    held = await healthy.submit(render_sbatch(JobDefinition(name="other", command="sleep 600", log_dir=job_dir)))
    try:
        await healthy.hold([held])
        await wait_for_state(healthy, ended, {JobState.COMPLETED})
        yield ended, held
    finally:
        await healthy.cancel([held])
        await healthy.run(["rm", "-rf", "--", job_dir])


async def held_ids(transport: SSHTransport) -> set[str]:
    """Every id slurmctld holds: each job's as svc names it (``9565_1`` for an array task) and each raw ``JobId``
    (``9566``, that task's own number, which sacct may list as a job of its own)."""
    text = await transport.check(scontrol_show_job_argv())
    return {job.job_id for job in parse_scontrol_jobs(text)} | set(re.findall(r"\bJobId=(\d+)", text))


@pytest.fixture
async def aged_out(healthy: SSHTransport) -> AsyncIterator[str]:
    """A real job that ended and that slurmctld no longer holds (purged past ``MinJobAge``), as accounting knows it
    while ``sacct`` works: the newest such job of any user, or on a cluster too fresh to have one, a job submitted
    now and waited for until slurmctld drops it (``MinJobAge`` plus its purge pass, up to 7 minutes on the dev
    clusters' 300 s)."""
    ended = await healthy.check([*ENDED_JOBS_ARGV])
    held = await held_ids(healthy)
    candidates = [job_id for job_id in ended.split() if job_id.isdigit() and job_id not in held]
    if candidates:
        yield max(candidates, key=int)
        return
    config = await healthy.check(["scontrol", "show", "config"])
    min_age = next(int(line.split("=")[1].split()[0]) for line in config.splitlines() if "MinJobAge" in line)
    job_dir = f"svc-aged-{uuid.uuid4().hex[:8]}"
    job_id = await healthy.submit(render_sbatch(JobDefinition(name="aged", command="true", log_dir=job_dir)))
    try:
        await wait_for_state(healthy, job_id, {JobState.COMPLETED})
        await eventually(
            lambda: held_ids(healthy),
            until=lambda ids: job_id not in ids,
            timeout=min_age + PURGE_PASS,
            interval=5,
            what=f"slurmctld dropping job {job_id} past MinJobAge={min_age}",
        )
        yield job_id
    finally:
        await healthy.run(["rm", "-rf", "--", job_dir])


async def test_with_sacct_failing_the_job_routes_answer_the_job_asked_or_not_found(
    aged_out: str,
    two_jobs: tuple[str, str],
    broken: SSHTransport,
    healthy: SSHTransport,
    svc_api_client: httpx.AsyncClient,
    svc_mcp_client: Callable[[], AbstractAsyncContextManager[Client]],
) -> None:
    ended, held = two_jobs
    assert (await broken.run(["sacct", "--version"])).exit_code == 1  # the fault is in place
    listing = [job.job_id for job in parse_scontrol_jobs(await broken.check(scontrol_show_job_argv()))]
    assert held in listing  # what the old describe picked from: other jobs, ours among them
    where = {"transport": BROKEN}

    missing = (NEVER_GIVEN, aged_out)
    assert aged_out not in listing
    assert (await healthy.run(scontrol_show_job_argv(aged_out))).exit_code != 0  # slurmctld forgot it
    for job_id in missing:
        unknown = await svc_api_client.get(f"/api/jobs/{job_id}", params=where)
        assert unknown.status_code == 404, unknown.text
        assert unknown.json() == {"detail": f"job {job_id} not found on transport '{BROKEN}'"}
        logs = await svc_api_client.get(f"/api/jobs/{job_id}/logs", params=where)
        assert logs.status_code == 404, logs.text
        cancelled = await svc_api_client.delete(f"/api/jobs/{job_id}", params=where)
        assert cancelled.status_code == 404, cancelled.text
    assert (await healthy.statuses([held]))[held].state is JobState.PENDING  # nobody else's job was touched

    asked = await svc_api_client.get(f"/api/jobs/{ended}", params=where)
    assert asked.status_code == 200, asked.text
    assert (asked.json()["job_id"], asked.json()["status"], asked.json()["name"]) == (int(ended), "COMPLETED", "asked")
    output = await svc_api_client.get(f"/api/jobs/{ended}/logs", params=where)
    assert output.json()["stdout"] == f"output of {ended}\n"

    for spelled in (f"0{ended}", "".join("٠١٢٣٤٥٦٧٨٩"[int(digit)] for digit in ended)):
        refused = await svc_api_client.get(f"/api/jobs/{spelled}", params=where)
        assert refused.status_code == 400, refused.text

    async with svc_mcp_client() as client:
        for tool in ("get_job_logs", "get_job_status", "cancel_job"):
            for job_id in missing:
                result = await client.call_tool(tool, {"job_id": job_id, "transport": BROKEN})
                assert result.structured_content == {
                    "success": False,
                    "error": f"job {job_id} not found on transport '{BROKEN}'",
                }, (tool, job_id)
        result = await client.call_tool("get_job_logs", {"job_id": ended, "transport": BROKEN})
        assert result.structured_content is not None
        assert (result.structured_content["job_id"], result.structured_content["stdout"]) == (
            ended,
            f"output of {ended}\n",
        )
    assert (await healthy.statuses([held]))[held].state is JobState.PENDING
