"""The SSH session pool for sweeps: bounded, shared by commands only while they run, closed on exit."""

from __future__ import annotations

import asyncio
import time
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
        start = time.perf_counter()
        results = await asyncio.gather(*(pool.run(["sh", "-c", "sleep 0.3; echo ok"]) for _ in range(24)))
        elapsed = time.perf_counter() - start
        assert [r.stdout for r in results] == ["ok\n"] * 24
        assert pool.opened <= 8
        assert elapsed < 24 * 0.3 / 2  # concurrent, not one after another
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
