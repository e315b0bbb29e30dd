"""JupyterLab and TensorBoard on the dev clusters (``scripts/devapps``, run by ``make cluster``): a real job runs them
from ``SVC_DEV_APPS`` (``/opt/svc-apps``, on lab24 inside its chroot) with the versions scripts/devcluster.d's
requirements ask for, as the user who submitted it. The session kinds' own tests start them the same way."""

from __future__ import annotations

import getpass
import shlex
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from svc_host.domain.jobs import JobState
from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.testing.waiting import wait_for_state
from svc_host.transports.base import Transport
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster

APPS_REQUIREMENTS = Path(__file__).resolve().parents[2] / "scripts" / "devcluster.d" / "apps-requirements.txt"
REQUIREMENTS = {
    requirement.name: requirement
    for line in APPS_REQUIREMENTS.read_text().splitlines()
    if line.strip() and not line.lstrip().startswith("#")
    for requirement in [Requirement(line)]
}


def versions_command(apps: str) -> str:
    """What the job runs: each app's own version answer, then who ran it."""
    bin_dir = shlex.quote(f"{apps}/bin")
    return f"{bin_dir}/jupyter lab --version && {bin_dir}/tensorboard --version && id -un"


async def run_versions_job(transport: Transport, apps: str, log_dir: str) -> list[str]:
    """Submit the versions job, wait for it to complete and return its output's lines."""
    script = render_sbatch(JobDefinition(name="svc-dev-apps", command=versions_command(apps), log_dir=log_dir))
    job_id = await transport.submit(script)
    done = await wait_for_state(transport, job_id, {JobState.COMPLETED, JobState.FAILED}, timeout=120)
    stdout, stderr = script.log_paths_for(job_id)
    output = await transport.read_log(stdout)
    assert done.state == JobState.COMPLETED, f"{output.content}\n{(await transport.read_log(stderr)).content}"
    return output.content.splitlines()


def assert_expected_versions(lines: list[str], user: str) -> None:
    lab, board, who = lines[-3:]
    assert lab in REQUIREMENTS["jupyterlab"].specifier, f"jupyter lab --version said {lab!r}"
    assert board in REQUIREMENTS["tensorboard"].specifier, f"tensorboard --version said {board!r}"
    assert who == user


@pytest.fixture
async def ssh(dev_profile: SSHProfile) -> AsyncIterator[SSHTransport]:
    transport = SSHTransport("dev", dev_profile)
    yield transport
    await transport.close()


async def test_a_job_submitted_over_ssh_runs_jupyterlab_and_tensorboard_as_the_user(
    ssh: SSHTransport, dev_env: dict[str, str]
) -> None:
    log_dir = f"svc-dev-apps-{uuid.uuid4().hex[:8]}"
    try:
        lines = await run_versions_job(ssh, dev_env["SVC_DEV_APPS"], log_dir)
    finally:
        await ssh.run(["rm", "-rf", "--", log_dir])
    assert_expected_versions(lines, dev_env["SVC_DEV_SSH_USER"])


async def test_a_job_submitted_with_this_machines_sbatch_runs_jupyterlab_and_tensorboard(
    slurm_cluster: None, dev_env: dict[str, str], tmp_path: Path
) -> None:
    transport = LocalTransport()
    try:
        lines = await run_versions_job(transport, dev_env["SVC_DEV_APPS"], str(tmp_path))
    finally:
        await transport.close()
    assert_expected_versions(lines, getpass.getuser())  # local jobs run as svc's own user
