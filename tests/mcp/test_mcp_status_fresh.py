"""``get_job_status`` answers a tracked live job from the scheduler's line and stores transitions after the
answer: polled through a real ``svc mcp`` on the dev cluster, the agent sees the job move forward only, and the
store holds each transition exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from svc_host.host import Host
from svc_host.store import jobs as job_repo

pytestmark = pytest.mark.cluster

ORDER = ["PENDING", "RUNNING", "COMPLETED"]


async def test_a_polled_job_moves_forward_and_each_transition_is_stored_once(
    mcp_factory: Callable[[], Any], slurm_cluster: None
) -> None:
    seen: list[str] = []
    async with mcp_factory() as mcp:
        submitted = await mcp("submit_job", command="sleep 8", name="fresh-status", partition="debug")
        assert submitted["success"], submitted
        job_id = submitted["job_id"]
        for _ in range(200):  # pauses past and within the ~1 s snapshots: answers from squeue and from the queue
            status = await mcp("get_job_status", job_id=job_id)
            assert status["success"], status
            assert status["job_id"] == job_id
            assert status["name"] == "fresh-status"
            if not seen or seen[-1] != status["status"]:
                seen.append(status["status"])
            if status["status"] == "COMPLETED":
                break
            await asyncio.sleep(0.3 + 0.5 * (len(seen) % 2))
    assert seen[-1] == "COMPLETED", seen
    assert "RUNNING" in seen, seen
    assert seen == sorted(seen, key=ORDER.index), f"went backwards: {seen}"
    host = Host.create("web")
    try:
        record = host.store.call(job_repo.find_job, "local", job_id)
        assert record is not None
        assert record.id is not None
        rows = host.store.call(job_repo.transitions, record.id)
    finally:
        await host.close()
    assert [(row.from_state, row.to_state) for row in rows] == [
        (None, "PENDING"),
        ("PENDING", "RUNNING"),
        ("RUNNING", "COMPLETED"),
    ]
