"""The SSH session pool for sweeps: bounded, shared by commands only while they run, closed on exit."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.testing.waiting import wait_for_state
from svc_plugin_ssh.pool import SessionPool
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster


async def test_pool_is_capped_at_eight_and_closes(dev_profile: SSHProfile) -> None:
    transport = SSHTransport("dev", dev_profile)
    async with transport.pooled(50) as pool:
        assert isinstance(pool, SessionPool)
        assert pool.size == 8
        timed = "date +%s.%N; sleep 0.5; date +%s.%N"  # when each command started and ended, on one clock
        results = await asyncio.gather(*(pool.run(["sh", "-c", timed]) for _ in range(24)))
        spans = [tuple(map(float, r.stdout.split())) for r in results]
        assert len(spans) == 24
        assert all(len(span) == 2 for span in spans)
        assert pool.opened <= 8
        # concurrent, not one after another, and never more at once than the pool's sessions
        at_once = max(sum(start <= moment < end for start, end in spans) for moment, _ in spans)
        assert 2 <= at_once <= 8, spans
    assert pool.opened == 0


async def test_more_jobs_than_sessions_do_not_starve(dev_profile: SSHProfile) -> None:
    transport = SSHTransport("dev", dev_profile)
    log_dir = f"svc-pool-{uuid.uuid4().hex[:6]}"
    async with transport.pooled(2) as pool:
        script = render_sbatch(JobDefinition(name="pooled", command="sleep 2", log_dir=log_dir))
        ids = await asyncio.gather(*(pool.submit(script) for _ in range(6)))
        assert pool.opened <= 2
        for job_id in ids:
            await wait_for_state(pool, job_id, {JobState.COMPLETED}, timeout=90)
        await pool.run(["rm", "-rf", "--", log_dir])
    assert pool.opened == 0
