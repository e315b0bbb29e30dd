"""Changes to a sweep's cells and to its status (each runs in one transaction through ``Store.run``/``call``):
claiming the next cells to launch, moving cells (one by one or as an array's tasks), draining and cancelling, failing
cells whose submission failed. Every one that changes cells takes the sweep's lock first and recounts its counters.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, update
from sqlmodel import Session, col, select

from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import utc_now
from svc_host.slurm.arrays import task_id
from svc_host.store.tables import SweepRunRecord, WorkflowRunJob, WorkflowRunRecord
from svc_host.sweeps.cell_counts import IN_FLIGHT, recount
from svc_host.sweeps.status import TERMINAL
from svc_host.sweeps.store import get_sweep
from svc_host.workflows import job_rows, run_status
from svc_host.workflows.plan import (
    CANCELLED,
    RETRYING,
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_PENDING,
    RUN_SUBMITTING,
    SUBMITTING,
    WAITING,
)


def next_cells(
    session: Session,
    sweep_id: int,
    launching: Collection[str],
    *,
    owner: str,
    lease_until: datetime,
    now: datetime | None = None,
) -> list[str]:
    """The pending cells to launch now (matrix order), at most ``max_parallel`` in flight counting the cells
    in ``launching`` that are still pending. Their ``started_at`` becomes now and their lease is ``owner``'s
    (the sweep's owner, who launches them: claimed together here, not one transaction per cell; any owner left
    by a process that died while launching them is replaced)."""
    run_status.lock_sweep(session, sweep_id)
    sweep = session.get(SweepRunRecord, sweep_id)
    if sweep is None:
        return []
    held = list(launching)
    busy: ColumnElement[bool] = col(WorkflowRunRecord.status).in_(IN_FLIGHT)
    if held:  # one statement: a cell moving from pending to syncing meanwhile is counted once either way
        busy = or_(busy, and_(col(WorkflowRunRecord.id).in_(held), col(WorkflowRunRecord.status) == RUN_PENDING))
    flying = session.exec(
        select(func.count()).select_from(WorkflowRunRecord).where(WorkflowRunRecord.sweep_id == sweep_id, busy)
    ).one()
    free = sweep.max_parallel - flying
    if free <= 0:
        return []
    query = (
        select(WorkflowRunRecord.id)
        .where(
            WorkflowRunRecord.sweep_id == sweep_id,
            WorkflowRunRecord.status == RUN_PENDING,
            col(WorkflowRunRecord.id).not_in(held),
        )
        .order_by(col(WorkflowRunRecord.started_at), col(WorkflowRunRecord.id))
        .limit(free)
    )
    chosen = list(session.exec(query))
    moment = now or utc_now()
    for position, run_id in enumerate(chosen):  # a microsecond apart: started_at keeps the launch order
        launched = moment + timedelta(microseconds=position)
        session.execute(
            update(WorkflowRunRecord)
            .where(col(WorkflowRunRecord.id) == run_id, col(WorkflowRunRecord.status) == RUN_PENDING)
            .values(started_at=launched, updated_at=launched, owner=owner, lease_until=lease_until)
        )
    return chosen


def drain_pending(
    session: Session, sweep_id: int, reason: str, *, keep: Collection[str] = (), now: datetime | None = None
) -> int:
    """Cancel every pending cell (but those in ``keep``: being launched) with ``reason`` as its error, its
    jobs ``CANCELLED``; returns how many. Counters are recounted."""
    moment = now or utc_now()
    run_status.lock_sweep(session, sweep_id)
    query = select(WorkflowRunRecord.id).where(
        WorkflowRunRecord.sweep_id == sweep_id,
        WorkflowRunRecord.status == RUN_PENDING,
        col(WorkflowRunRecord.id).not_in(list(keep)),
    )
    ids = list(session.exec(query))
    if ids:
        session.execute(
            update(WorkflowRunJob)
            .where(col(WorkflowRunJob.run_id).in_(ids), col(WorkflowRunJob.status).in_([WAITING, RETRYING]))
            .values(status=CANCELLED, next_retry_at=None, updated_at=moment)
        )
        session.execute(
            update(WorkflowRunRecord)
            .where(col(WorkflowRunRecord.id).in_(ids), col(WorkflowRunRecord.status) == RUN_PENDING)
            .values(status=RUN_CANCELLED, error=reason, completed_at=moment, updated_at=moment, owner=None)
        )
    recount(session, sweep_id, moment)
    return len(ids)


@dataclass(frozen=True)
class CancelOutcome:
    """What a cancel request found: the sweep after it, and the status it left (None: nothing changed)."""

    sweep: SweepRunRecord | None
    left: str | None


def request_cancel(session: Session, sweep_id: int, now: datetime | None = None) -> CancelOutcome:
    """The first cancel of a sweep not terminal: drain its pending cells, stamp ``cancel_requested_at``,
    status ``draining``. Any other cancel changes nothing."""
    moment = now or utc_now()
    sweep = get_sweep(session, sweep_id)
    if sweep is None or sweep.cancel_requested_at is not None or sweep.status in TERMINAL:
        return CancelOutcome(sweep, None)
    left = sweep.status
    drain_pending(session, sweep_id, "not started: the sweep was cancelled", now=moment)  # cells, then the sweep
    result = session.execute(
        update(SweepRunRecord)
        .where(
            col(SweepRunRecord.id) == sweep_id,
            col(SweepRunRecord.cancel_requested_at).is_(None),
            col(SweepRunRecord.status) == left,
        )
        .values(cancel_requested_at=moment, status="draining", paused_at=None, cells_held=0, updated_at=moment)
        .execution_options(synchronize_session=False)
    )
    changed = getattr(result, "rowcount", 0) == 1
    return CancelOutcome(get_sweep(session, sweep_id), left if changed else None)


def move_status(
    session: Session, sweep_id: int, before: str, after: str, *, error: str | None = None, now: datetime | None = None
) -> bool:
    """Compare-and-set the sweep's status (so each change is made, and announced, once)."""
    moment = now or utc_now()
    values: dict[str, Any] = {"status": after, "updated_at": moment}
    if after in TERMINAL:  # an ended sweep is no longer paused
        values.update(completed_at=moment, paused_at=None, cells_held=0)
    if error is not None:
        values["error"] = error
    result = session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.id) == sweep_id, col(SweepRunRecord.status) == before)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1


@dataclass(frozen=True)
class ArrayCell:
    """A cell submitted as task ``index`` of its sweep's array: its run, its one job row (and that job's own
    definition, the cell's command) and the log paths."""

    run_id: str
    job_row: int
    index: int
    definition: JobDefinition
    stdout_path: str | None
    stderr_path: str | None


def move_cells(
    session: Session,
    sweep_id: int,
    run_ids: Sequence[str],
    status: str,
    *,
    only_from: Collection[str],
    error: str | None = None,
    owner: str | None = None,
    lease_until: datetime | None = None,
    now: datetime | None = None,
) -> list[tuple[str, str]]:
    """Move cells to ``status`` (each a compare-and-set from its status in ``only_from``) and recount once;
    returns ``(cell, old status)`` of those moved. Leaving ``pending`` stamps ``started_at`` (a microsecond apart,
    in the given order) and the owner; a move to ``submitting`` also marks the cells' waiting jobs
    ``SUBMITTING`` (attempt 1), the crash marker of a submission."""
    moment = now or utc_now()
    current = dict(
        session.exec(
            select(WorkflowRunRecord.id, WorkflowRunRecord.status).where(
                col(WorkflowRunRecord.id).in_(list(run_ids)), WorkflowRunRecord.sweep_id == sweep_id
            )
        ).all()
    )
    moved: list[tuple[str, str]] = []
    for run_id in run_ids:
        before = current.get(run_id)
        if before is None or before not in only_from or before == status:
            continue
        values: dict[str, Any] = {"status": status, "updated_at": moment}
        if before == RUN_PENDING:
            launched = moment + timedelta(microseconds=len(moved))
            values.update(started_at=launched, owner=owner, lease_until=lease_until)
        if error is not None:
            values["error"] = error
        if status in (RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED):
            values["completed_at"] = moment
        result = session.execute(
            update(WorkflowRunRecord)
            .where(col(WorkflowRunRecord.id) == run_id, col(WorkflowRunRecord.status) == before)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        if getattr(result, "rowcount", 0) == 1:
            moved.append((run_id, before))
    if status == RUN_SUBMITTING and moved:
        session.execute(
            update(WorkflowRunJob)
            .where(
                col(WorkflowRunJob.run_id).in_([run_id for run_id, _ in moved]), col(WorkflowRunJob.status) == WAITING
            )
            .values(status=SUBMITTING, attempt=WorkflowRunJob.attempt + 1, submitting_since=moment, updated_at=moment)
        )
    recount(session, sweep_id, moment)
    return moved


def finish_array(
    session: Session,
    sweep_id: int,
    *,
    transport: str,
    array_job_id: str,
    cells: Sequence[ArrayCell],
    now: datetime | None = None,
) -> dict[str, str]:
    """Record an accepted array: the sweep's ``array_job_id``, and for every cell its task ``<array>_<index>``
    (a ``job`` row tracked by the monitor, as for any submission), in one transaction. Returns each cell's
    status (a cell cancelled meanwhile must have its task cancelled)."""
    moment = now or utc_now()
    session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.id) == sweep_id)
        .values(array_job_id=array_job_id, updated_at=moment)
        .execution_options(synchronize_session=False)
    )
    statuses: dict[str, str] = {}
    for cell in cells:
        statuses[cell.run_id] = job_rows.finish_submit(
            session,
            cell.job_row,
            transport=transport,
            job_id=task_id(array_job_id, cell.index),
            definition=cell.definition,
            stdout_path=cell.stdout_path,
            stderr_path=cell.stderr_path,
            now=moment,
        )
    return statuses


def fail_cells(session: Session, sweep_id: int, run_ids: Sequence[str], error: str) -> list[tuple[str, str]]:
    """Fail cells whose submission failed: their ``SUBMITTING`` jobs ``FAILED`` and the cells ``failed`` with
    ``error``; returns ``(cell, old status)`` of those moved."""
    moment = utc_now()
    session.execute(
        update(WorkflowRunJob)
        .where(col(WorkflowRunJob.run_id).in_(list(run_ids)), col(WorkflowRunJob.status) == SUBMITTING)
        .values(status="FAILED", submitting_since=None, error=error, updated_at=moment)
    )
    return move_cells(
        session, sweep_id, run_ids, RUN_FAILED, only_from=[RUN_PENDING, RUN_SUBMITTING], error=error, now=moment
    )
