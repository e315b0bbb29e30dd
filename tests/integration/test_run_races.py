"""Races between two engines on one store (two svc processes): a run's completion against its cancel.

Every round has a run whose only job the monitor saw end ``COMPLETED``: one engine advances it (the run should
complete) while the other cancels it. The state machine allows either ending, never both: the run ends in
the winner's status, exactly one ``workflow_run.status_changed`` event leaves ``running``, and a cancel that
lost is told the run is already completed (what REST answers with 422).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from sqlmodel import Session

from svc_host import hookimpl
from svc_host.domain.submission import JobDefinition
from svc_host.errors import InvalidStateError
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.store.tables import JobRecord
from svc_host.workflows import job_rows
from svc_host.workflows import store as repo
from svc_host.workflows.engine import WorkflowEngine
from svc_host.workflows.plan import RUN_CANCELLED, RUN_COMPLETED, RUN_RUNNING, WAITING

pytestmark = pytest.mark.cluster


@pytest.fixture
def svc_database_url(database_url: str) -> str:
    """This module runs on SQLite and on PostgreSQL."""
    return database_url


ROUNDS = 120


class RunEvents:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    @hookimpl
    def svc_event(self, event: Event) -> None:
        if event.name == "workflow_run.status_changed":
            self.seen.append((event.payload["id"], event.payload["from"], event.payload["to"]))


def ended_job_run(session: Session, run_id: str, owner: str, job_id: str) -> None:
    """A ``running`` run whose one job was submitted and has ended ``COMPLETED`` (as the monitor records it)."""
    definition = JobDefinition(name="only", command="true")
    job = repo.NewJob(name="only", dependencies=[], definition=definition, retry=0, retry_delay=5)
    new = repo.NewRun("race", "/race.yaml", {}, {}, "local", None, [], [job])
    repo.insert_run(session, new, run_id=run_id, status=RUN_RUNNING, triggered_by="web", owner=owner)
    snap = repo.snapshot(session, run_id)
    assert snap is not None
    row = snap.jobs[0].id
    assert row is not None
    job_rows.begin_submit(session, row, WAITING)
    job_rows.finish_submit(
        session, row, transport="local", job_id=job_id, definition=definition, stdout_path=None, stderr_path=None
    )
    record = session.get(JobRecord, repo.snapshot(session, run_id).jobs[0].job_pk)  # type: ignore[union-attr]
    assert record is not None
    record.state = record.raw_state = "COMPLETED"
    record.ended_at = datetime.now(UTC)
    session.add(record)


async def test_completion_racing_cancel_ends_the_run_once(make_host: Callable[[], Host]) -> None:
    first, second = make_host(), make_host()
    events = RunEvents()
    first.plugins.register(events, "run-events")  # both hosts share the plugin manager
    completer = WorkflowEngine(first, adopt_orphans=False)
    canceller = WorkflowEngine(second, adopt_orphans=False)
    outcomes: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        run_id = f"race-{round_}"
        # a job id no scheduler knows: nothing live is ever cancelled on the cluster
        await first.store.run(ended_job_run, run_id, completer.owner, f"99{round_:07d}")
        _, cancel = await asyncio.gather(
            completer.driver.advance(run_id), canceller.cancel(run_id), return_exceptions=True
        )
        snap = await completer.get(run_id)
        left_running = [(old, new) for rid, old, new in events.seen if rid == run_id and old == RUN_RUNNING]
        assert left_running == [(RUN_RUNNING, snap.run.status)], (run_id, events.seen)
        if snap.run.status == RUN_CANCELLED:
            assert cancel == []
        else:
            assert snap.run.status == RUN_COMPLETED
            assert isinstance(cancel, InvalidStateError), cancel
            assert "already completed" in str(cancel)
        outcomes[snap.run.status] += 1
    await completer.close()
    await canceller.close()
    assert sum(outcomes.values()) == ROUNDS
    print(f"completion vs cancel over {ROUNDS} rounds: {dict(outcomes)}")
