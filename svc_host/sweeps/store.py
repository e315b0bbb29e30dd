"""Repository functions for sweeps (each runs in one transaction through ``Store.run``/``call``).

The sweep row and every cell (a ``pending`` workflow run with ``sweep_id``) are written in one transaction.

The ``cells_*`` counters are recounted by one ``UPDATE sweep_run SET cells_x = (SELECT count(*) ...)`` in the
transaction of every cell status change (an ``on_status_change`` hook of the workflow store, registered when
this module is imported), and in every transaction of this module that changes cells. The recount runs after
the cell's own change is written, so it holds the write lock (SQLite) or the sweep row's lock (other
databases, ``SELECT ... FOR UPDATE`` first): it always adds up to ``cell_count`` and always matches the cells'
real statuses, whatever the caller believed the old status was (``set_run_status`` is a compare-and-set, and
the recount does not depend on it being one).
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Update, and_, bindparam, case, func, or_, update
from sqlmodel import Session, col, select

from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import utc_now
from svc_host.runtime.leases import Leases, table_of
from svc_host.slurm.arrays import task_id
from svc_host.store.tables import JobRecord, SweepRunRecord, WorkflowRunJob, WorkflowRunRecord
from svc_host.sweeps.status import PENDING, TERMINAL, Counters
from svc_host.workflows import store as runs
from svc_host.workflows.plan import (
    CANCELLED,
    RETRYING,
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_PENDING,
    RUN_RUNNING,
    RUN_SUBMITTING,
    RUN_SYNCING,
    SUBMITTING,
    WAITING,
)

IN_FLIGHT = (RUN_SYNCING, RUN_SUBMITTING, RUN_RUNNING)
COUNTED: dict[str, tuple[str, ...]] = {
    "cells_pending": (RUN_PENDING,),
    "cells_running": IN_FLIGHT,
    "cells_completed": (RUN_COMPLETED,),
    "cells_failed": (RUN_FAILED,),
    "cells_cancelled": (RUN_CANCELLED,),
}
MAX_LISTED = 200
SWEEP_LEASES: Leases[int] = Leases(table_of(SweepRunRecord), terminal=TERMINAL)
"""Which orchestrator launches a sweep's cells (the process's owner name, as for workflow runs)."""


@dataclass(frozen=True)
class NewSweep:
    """A sweep row to create with its cells."""

    name: str
    workflow_yaml_path: str
    matrix: Mapping[str, Sequence[Any]]
    args: Mapping[str, Any]
    fail_fast: bool
    max_parallel: int
    submission_source: str
    transport: str
    max_failures: int | None = None


def counters(sweep: SweepRunRecord) -> Counters:
    return Counters(
        pending=sweep.cells_pending,
        running=sweep.cells_running,
        completed=sweep.cells_completed,
        failed=sweep.cells_failed,
        cancelled=sweep.cells_cancelled,
    )


def insert_sweep(
    session: Session,
    sweep: NewSweep,
    cells: Sequence[runs.NewRun],
    *,
    owner: str | None = None,
    lease_until: datetime | None = None,
    now: datetime | None = None,
) -> SweepRunRecord:
    """Create the sweep (``pending``) and every cell (``pending`` runs, triggered by the sweep's source).

    Cells are created in matrix order, a microsecond apart, so ``started_at`` orders the pending ones; a
    cell's ``started_at`` becomes the time of its launch (``next_cells``).
    """
    moment = now or utc_now()
    record = SweepRunRecord(
        name=sweep.name,
        workflow_yaml_path=sweep.workflow_yaml_path,
        status=PENDING,
        matrix=json.dumps(dict(sweep.matrix)),
        args=json.dumps(dict(sweep.args), sort_keys=True, default=str),
        fail_fast=sweep.fail_fast,
        max_parallel=sweep.max_parallel,
        max_failures=sweep.max_failures,
        cell_count=len(cells),
        cells_pending=len(cells),
        submission_source=sweep.submission_source,
        transport=sweep.transport,
        started_at=moment,
        updated_at=moment,
        owner=owner,
        lease_until=lease_until,
    )
    session.add(record)
    session.flush()
    if record.id is None:
        raise LookupError("the sweep row got no id")
    for position, cell in enumerate(cells):
        runs.insert_run(
            session,
            cell,
            run_id=str(uuid.uuid4()),
            status=RUN_PENDING,
            triggered_by=sweep.submission_source,
            sweep_id=record.id,
            now=moment + timedelta(microseconds=position),
        )
    return record


def recount(session: Session, sweep_id: int, now: datetime | None = None) -> None:
    """Set the counters from the cells' statuses (after writing this transaction's own changes)."""
    session.flush()
    runs.lock_sweep(session, sweep_id)

    def count(statuses: tuple[str, ...]) -> Any:
        return (
            select(func.count())
            .select_from(WorkflowRunRecord)
            .where(WorkflowRunRecord.sweep_id == sweep_id, col(WorkflowRunRecord.status).in_(statuses))
            .scalar_subquery()
        )

    values: dict[str, Any] = {name: count(statuses) for name, statuses in COUNTED.items()}
    values["cells_held"] = case((col(SweepRunRecord.paused_at).is_not(None), _held_count(sweep_id)), else_=0)
    session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.id) == sweep_id)
        .values(**values, updated_at=now or utc_now())
        .execution_options(synchronize_session=False)
    )


def _held_count(sweep_id: int) -> Any:
    """Launched cells of the sweep with a job still queued (``PENDING``): those a pause holds."""
    return in_queue(select(func.count(func.distinct(WorkflowRunRecord.id))), [sweep_id]).scalar_subquery()


def in_queue(query: Any, sweep_ids: Collection[int]) -> Any:
    """``query`` over the launched cells of ``sweep_ids`` whose current job waits in the queue (``PENDING``)."""
    return (
        query.select_from(WorkflowRunRecord)
        .join(WorkflowRunJob, col(WorkflowRunJob.run_id) == col(WorkflowRunRecord.id))
        .join(JobRecord, col(JobRecord.id) == col(WorkflowRunJob.job_pk))
        .where(
            col(WorkflowRunRecord.sweep_id).in_(list(sweep_ids)),
            col(WorkflowRunRecord.status).in_(IN_FLIGHT),
            JobRecord.state == "PENDING",
        )
    )


def _count_cells(session: Session, run: WorkflowRunRecord, before: str) -> None:
    """Move one cell from its old status's counter to its new one's: a constant-time update, not a recount of
    every cell (``set_run_status`` holds the sweep's lock, and the update commits with the change or not at all).
    """
    if run.sweep_id is None:
        return
    moves = tuple((name, (run.status in statuses) - (before in statuses)) for name, statuses in COUNTED.items())
    statement = _counters_update(tuple((name, delta) for name, delta in moves if delta))
    session.execute(statement, {"sweep_id": run.sweep_id, "moment": utc_now()})


@functools.cache
def _counters_update(deltas: tuple[tuple[str, int], ...]) -> Update:
    """``UPDATE sweep_run SET cells_x = cells_x + delta ...`` for one kind of move (built once per kind, so
    SQLAlchemy compiles it once; bound as ``sweep_id`` and ``moment``)."""
    moment = bindparam("moment", type_=SweepRunRecord.__table__.c["updated_at"].type)  # type: ignore[attr-defined]
    values: dict[str, Any] = {name: getattr(SweepRunRecord, name) + delta for name, delta in deltas}
    return (
        update(SweepRunRecord)
        .where(col(SweepRunRecord.id) == bindparam("sweep_id"))
        .values(**values, updated_at=moment)
        .execution_options(synchronize_session=False)
    )


runs.on_status_change(_count_cells)


def get_sweep(session: Session, sweep_id: int) -> SweepRunRecord | None:
    return session.exec(
        select(SweepRunRecord).where(SweepRunRecord.id == sweep_id).execution_options(populate_existing=True)
    ).first()


def recounted(session: Session, sweep_id: int) -> SweepRunRecord | None:
    """The sweep with its counters recounted (this also heals counters of a change made without the hook)."""
    if get_sweep(session, sweep_id) is None:
        return None
    recount(session, sweep_id)
    return get_sweep(session, sweep_id)


def list_sweeps(session: Session, limit: int = MAX_LISTED) -> list[SweepRunRecord]:
    """Sweeps, newest first."""
    query = select(SweepRunRecord).order_by(col(SweepRunRecord.started_at).desc(), col(SweepRunRecord.id).desc())
    return list(session.exec(query.limit(limit)))


def cells(session: Session, sweep_id: int) -> list[WorkflowRunRecord]:
    """The cells of a sweep ordered by status, started_at, id."""
    query = (
        select(WorkflowRunRecord)
        .where(WorkflowRunRecord.sweep_id == sweep_id)
        .order_by(col(WorkflowRunRecord.status), col(WorkflowRunRecord.started_at), col(WorkflowRunRecord.id))
    )
    return list(session.exec(query))


def cell_jobs(session: Session, sweep_id: int) -> dict[str, dict[str, str]]:
    """The current scheduler job of every submitted job of a sweep's cells: cell id -> job name -> job id (an array
    task ``123_4`` for a sweep submitted as one array)."""
    query = (
        select(WorkflowRunJob.run_id, WorkflowRunJob.name, WorkflowRunJob.job_id)
        .join(WorkflowRunRecord, col(WorkflowRunRecord.id) == col(WorkflowRunJob.run_id))
        .where(WorkflowRunRecord.sweep_id == sweep_id, col(WorkflowRunJob.job_id).is_not(None))
        .order_by(col(WorkflowRunJob.position))
    )
    found: dict[str, dict[str, str]] = {}
    for run_id, name, job_id in session.exec(query):
        found.setdefault(run_id, {})[name] = str(job_id)
    return found


def cell_ids(session: Session, sweep_id: int, statuses: Collection[str]) -> list[str]:
    query = select(WorkflowRunRecord.id).where(
        WorkflowRunRecord.sweep_id == sweep_id, col(WorkflowRunRecord.status).in_(list(statuses))
    )
    return list(session.exec(query))


def first_failure(session: Session, sweep_id: int) -> tuple[str, str | None] | None:
    """``(cell id, error)`` of the cell that failed first."""
    query = (
        select(WorkflowRunRecord)
        .where(WorkflowRunRecord.sweep_id == sweep_id, WorkflowRunRecord.status == RUN_FAILED)
        .order_by(col(WorkflowRunRecord.completed_at), col(WorkflowRunRecord.id))
    )
    found = session.exec(query.limit(1)).first()
    return (found.id, found.error) if found is not None else None


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
    runs.lock_sweep(session, sweep_id)
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
    runs.lock_sweep(session, sweep_id)
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
        statuses[cell.run_id] = runs.finish_submit(
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


def waiting_in_queue(session: Session, sweep_id: int) -> list[tuple[str, str]]:
    """``(cell, task id)`` of the running cells of an array sweep whose task has not started (``PENDING``)."""
    query = (
        select(WorkflowRunRecord.id, JobRecord.job_id)
        .join(WorkflowRunJob, col(WorkflowRunJob.run_id) == col(WorkflowRunRecord.id))
        .join(JobRecord, col(JobRecord.id) == col(WorkflowRunJob.job_pk))
        .where(
            WorkflowRunRecord.sweep_id == sweep_id,
            WorkflowRunRecord.status == RUN_RUNNING,
            WorkflowRunJob.status == "PENDING",
            JobRecord.state == "PENDING",
        )
    )
    return [(run_id, job_id) for run_id, job_id in session.exec(query).all()]


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


def cells_by_id(session: Session, sweep_id: int, run_ids: Sequence[str]) -> dict[str, WorkflowRunRecord]:
    query = select(WorkflowRunRecord).where(
        WorkflowRunRecord.sweep_id == sweep_id, col(WorkflowRunRecord.id).in_(list(run_ids))
    )
    return {run.id: run for run in session.exec(query.execution_options(populate_existing=True))}
