"""Repository functions for steering a sweep (each runs in one transaction through ``Store.run``/``call``): its
pause (``paused_at``, compare-and-set), the jobs a pause holds, and why a spent failure budget stopped it.

``cells_held`` is recounted with the other counters (``svc_host.sweeps.store.recount``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update
from sqlmodel import Session, col, select

from svc_host.domain.times import utc_now
from svc_host.store.tables import JobRecord, SweepRunRecord, WorkflowRunJob, WorkflowRunRecord
from svc_host.sweeps.status import TERMINAL
from svc_host.sweeps.store import IN_FLIGHT, get_sweep, recount


def queued_jobs(session: Session, sweep_id: int) -> list[str]:
    """Scheduler ids of the sweep's launched cells' jobs still queued (``PENDING``): what a pause holds."""
    query = (
        select(JobRecord.job_id)
        .join(WorkflowRunJob, col(WorkflowRunJob.job_pk) == col(JobRecord.id))
        .join(WorkflowRunRecord, col(WorkflowRunRecord.id) == col(WorkflowRunJob.run_id))
        .where(
            WorkflowRunRecord.sweep_id == sweep_id,
            col(WorkflowRunRecord.status).in_(IN_FLIGHT),
            JobRecord.state == "PENDING",
        )
        .order_by(col(JobRecord.id))
    )
    return list(dict.fromkeys(session.exec(query)))


@dataclass(frozen=True)
class SteerOutcome:
    """What a pause or resume found: the sweep after it, and whether this request changed it."""

    sweep: SweepRunRecord | None
    changed: bool


def set_paused(session: Session, sweep_id: int, paused: bool, now: datetime | None = None) -> SteerOutcome:
    """Pause (stamp ``paused_at``) or resume (clear it) a sweep that is neither ended nor cancelled, by
    compare-and-set; a sweep already so is left as it is. Counters (``cells_held``) are recounted."""
    moment = now or utc_now()
    sweep = get_sweep(session, sweep_id)
    if sweep is None or sweep.status in TERMINAL or sweep.cancel_requested_at is not None:
        return SteerOutcome(sweep, False)
    was = col(SweepRunRecord.paused_at).is_(None) if paused else col(SweepRunRecord.paused_at).is_not(None)
    result = session.execute(
        update(SweepRunRecord)
        .where(
            col(SweepRunRecord.id) == sweep_id,
            was,
            col(SweepRunRecord.cancel_requested_at).is_(None),
            col(SweepRunRecord.status).not_in(list(TERMINAL)),
        )
        .values(paused_at=moment if paused else None, updated_at=moment)
        .execution_options(synchronize_session=False)
    )
    changed = getattr(result, "rowcount", 0) == 1
    recount(session, sweep_id, moment)
    return SteerOutcome(get_sweep(session, sweep_id), changed)


def note_stop(session: Session, sweep_id: int, reason: str) -> bool:
    """Record why a sweep stopped launching (its ``error``) unless it ended or has a reason already."""
    result = session.execute(
        update(SweepRunRecord)
        .where(
            col(SweepRunRecord.id) == sweep_id,
            col(SweepRunRecord.error).is_(None),
            col(SweepRunRecord.status).not_in(list(TERMINAL)),
        )
        .values(error=reason)
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1
