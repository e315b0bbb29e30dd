"""Polling helpers for tests that watch real jobs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.transports.base import Transport


async def wait_for_state(
    transport: Transport,
    job_id: str,
    states: Collection[JobState],
    *,
    timeout: float = 60.0,
    interval: float = 0.5,
) -> JobStatus:
    """Poll until the job reaches one of ``states``; fail with the last status seen on timeout."""
    deadline = time.monotonic() + timeout
    last: JobStatus | None = None
    while time.monotonic() < deadline:
        last = (await transport.statuses([job_id])).get(job_id, last)
        if last is not None and last.state in states:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"job {job_id} did not reach {sorted(states)} in {timeout:.0f} s; last seen: {last}")
