"""A job the scheduler does not know (in neither squeue nor sacct), tracked by a workflow run, on the dev cluster:
after ``lost_after`` the monitor ends it ``FAILED``/``LOST``, the run fails, and nothing is left to poll."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from sqlmodel import Session

from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.store import jobs as job_repo
from svc_host.workflows import job_rows
from svc_host.workflows import store as repo
from svc_host.workflows.engine import WorkflowEngine
from svc_host.workflows.plan import RUN_RUNNING, WAITING

pytestmark = pytest.mark.cluster

NEVER_EXISTED = "66999999"
"""Below Slurm's default MaxJobId, far above any id the dev cluster has handed out."""


def run_with_job(session: Session, run_id: str, owner: str, job_id: str) -> None:
    definition = JobDefinition(name="only", command="true")
    job = repo.NewJob(name="only", dependencies=[], definition=definition, retry=0, retry_delay=5)
    new = repo.NewRun("lost", "/lost.yaml", {}, {}, "local", None, [], [job])
    repo.insert_run(session, new, run_id=run_id, status=RUN_RUNNING, triggered_by="web", owner=owner)
    snap = repo.snapshot(session, run_id)
    assert snap is not None
    row = snap.jobs[0].id
    assert row is not None
    job_rows.begin_submit(session, row, WAITING)
    job_rows.finish_submit(
        session, row, transport="local", job_id=job_id, definition=definition, stdout_path=None, stderr_path=None
    )


async def test_a_job_slurm_never_knew_ends_lost_and_fails_its_run(make_host: Callable[[], Host]) -> None:
    host = make_host()
    host.monitor.lost_after = 2.0
    engine = WorkflowEngine(host, adopt_orphans=False)
    await engine.start()
    try:
        await host.store.run(run_with_job, "lost-run", engine.owner, NEVER_EXISTED)
        host.monitor.poke("local")
        snap = await engine.wait("lost-run", timeout=60)
        assert snap.run.status == "failed", snap.run
        assert snap.run.error is not None
        assert "ended FAILED" in snap.run.error
        record = await host.store.run(job_repo.find_job, "local", NEVER_EXISTED)
        assert record is not None
        assert (record.state, record.raw_state[:4]) == ("FAILED", "LOST")
        assert await host.store.run(job_repo.live_job_ids, "local") == []
        loop = host.monitor._loops["local"]
        await asyncio.wait_for(loop, 30)  # nothing live: the status loop ends instead of polling forever
    finally:
        await engine.close()
        await host.monitor.stop()
        await host.transports.close()
