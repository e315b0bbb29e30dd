"""Issue 26, N16 on the real cluster: another user's job names the svc user's 0600 file as its log.

svc reaches the dev cluster as ``svcdev`` over SSH. Root (this test, with the cluster's own ``sbatch``: this
machine's for Slurm 22.05, the chroot's for lab24, so the 24.11 pass runs it too) submits a held job whose
``--output`` is a 0600 file of svcdev's. svc used to read that file as svcdev and answer it as the
job's stdout, on the dashboard's REST route and through MCP's ``get_job_logs``. svc now reads the logs of jobs it
did not submit only from files the job's own user owns; svcdev's own jobs (submitted outside svc) still show theirs.
"""

from __future__ import annotations

import subprocess
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
from svc_host.testing.fake import transport_plugin
from svc_host.testing.waiting import wait_for_state
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster

SECRET = "svcdev-private-" + uuid.uuid4().hex


@pytest.fixture
async def svc_side(dev_profile: SSHProfile, svc_register_plugin: Callable[..., None]) -> SSHTransport:
    """svc's transport to the cluster as svcdev, offered to the test's host as ``dev`` (the host closes it)."""
    transport = SSHTransport("dev", dev_profile)
    svc_register_plugin(transport_plugin(transport))
    return transport


@pytest.fixture
async def secret_file(svc_side: SSHTransport) -> AsyncIterator[str]:
    """A 0600 file of svcdev's, in its home directory."""
    path = f"{await svc_side.login_dir()}/svc-n16-{uuid.uuid4().hex[:8]}.secret"
    await svc_side.check(["sh", "-c", 'umask 077 && printf "%s\\n" "$1" > "$2"', "sh", SECRET, path])
    yield path
    await svc_side.run(["rm", "-f", "--", path])


@pytest.fixture
def as_root(dev_env: dict[str, str]) -> list[str]:
    """The argv prefix that runs a Slurm command as root on the cluster's machine: none on this one, ``chroot``
    into lab24's root (its munged and slurmctld answer there; this machine's 22.05 client cannot talk to 24.11)."""
    root = Path(dev_env["SVC_DEV_ROOT"])
    return [] if root == Path("/") else ["chroot", str(root)]


@pytest.fixture
def foreign_job(secret_file: str, as_root: list[str]) -> Iterator[str]:
    """root's held job whose stdout and stderr are svcdev's secret file (it never runs: nothing writes it)."""
    submitted = subprocess.run(
        [*as_root, "sbatch", "--parsable", "--hold", "--partition=debug", f"--output={secret_file}", "--wrap=true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    job_id = submitted.stdout.strip().split(";")[0]
    yield job_id
    subprocess.run([*as_root, "scancel", job_id], capture_output=True, timeout=60, check=False)


async def test_another_users_job_cannot_read_the_svc_users_file(
    foreign_job: str,
    svc_api_client: httpx.AsyncClient,
    svc_mcp_client: Callable[[], AbstractAsyncContextManager[Client]],
) -> None:
    answer = await svc_api_client.get(f"/api/jobs/{foreign_job}/logs", params={"transport": "dev"})
    assert SECRET not in answer.text
    assert answer.status_code == 403, answer.text
    assert "does not own" in answer.json()["detail"]
    async with svc_mcp_client() as client:
        result = await client.call_tool("get_job_logs", {"job_id": foreign_job, "transport": "dev"})
    assert result.structured_content is not None
    assert SECRET not in str(result.structured_content)
    assert result.structured_content["success"] is False


async def test_the_users_own_job_outside_svc_still_shows_its_log(
    svc_side: SSHTransport, svc_api_client: httpx.AsyncClient
) -> None:
    job_dir = f"svc-n16-{uuid.uuid4().hex[:8]}"
    job_id = await svc_side.submit(
        render_sbatch(JobDefinition(name="own", command='echo "own output of $SLURM_JOB_ID"', log_dir=job_dir))
    )
    try:
        await wait_for_state(svc_side, job_id, {JobState.COMPLETED})
        answer = await svc_api_client.get(f"/api/jobs/{job_id}/logs", params={"transport": "dev"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["stdout"] == f"own output of {job_id}\n"
    finally:
        await svc_side.run(["rm", "-rf", "--", job_dir])
