"""Pausing a sweep submitted as one array whose first tasks ended (issue 28, B38), on the real cluster: Slurm
24.11 answers ``scontrol uhold <array>`` with "<ended>: Job has already finished" and "<held>: No error" and
exit 1. Holding and releasing succeed all the same, the pending task is held, then released."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.testing.waiting import eventually, wait_for_state
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster

SCRIPT = """#!/bin/bash
#SBATCH --array=0-2%1
#SBATCH --time=2
if [ "$SLURM_ARRAY_TASK_ID" != 0 ]; then sleep 60; fi
"""


@pytest.fixture
async def transport(dev_profile: SSHProfile) -> AsyncIterator[SSHTransport]:
    opened = SSHTransport("dev", dev_profile)
    yield opened
    await opened.close()


async def test_holding_an_array_whose_first_task_ended(transport: SSHTransport) -> None:
    job_dir = f"svc-b38-{uuid.uuid4().hex[:8]}"
    array = await transport.submit(render_sbatch(JobDefinition(name="b38", script=SCRIPT, log_dir=job_dir)))
    try:
        await wait_for_state(transport, f"{array}_0", {JobState.COMPLETED})

        async def reason_of_last() -> str | None:
            found = await transport.statuses([f"{array}_2"])
            job = found.get(f"{array}_2")
            return job.reason if job is not None and job.state is JobState.PENDING else None

        await transport.hold([array])  # 24.11: exit 1, "No error" for the held tasks
        assert await eventually(reason_of_last, until=lambda r: r == "JobHeldUser", what="task 2 held") == "JobHeldUser"
        await transport.hold([array], release=True)
        await eventually(reason_of_last, until=lambda r: r != "JobHeldUser", what="task 2 released")
    finally:
        await transport.cancel([array])
        await transport.run(["rm", "-rf", "--", job_dir])
