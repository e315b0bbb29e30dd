"""A sweep's ``cells_*`` counters.

They are recounted by one ``UPDATE sweep_run SET cells_x = (SELECT count(*) ...)`` (``recount``) in every transaction
of the sweep store that changes cells, and moved by a constant-time update in the transaction of every cell status
change (an ``on_status_change`` hook of the workflow run status changes, registered when this module is imported).
The recount runs after the cell's own change is written, so it holds the write lock (SQLite) or the sweep row's lock
(other databases, ``SELECT ... FOR UPDATE`` first): it always adds up to ``cell_count`` and always matches the cells'
real statuses, whatever the caller believed the old status was (``set_run_status`` is a compare-and-set, and the
recount does not depend on it being one).
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import Update, bindparam, case, func, update
from sqlmodel import Session, col, select

from svc_host.domain.times import utc_now
from svc_host.store.tables import JobRecord, SweepRunRecord, WorkflowRunJob, WorkflowRunRecord
from svc_host.workflows import run_status
from svc_host.workflows.plan import (
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_PENDING,
    RUN_RUNNING,
    RUN_SUBMITTING,
    RUN_SYNCING,
)

IN_FLIGHT = (RUN_SYNCING, RUN_SUBMITTING, RUN_RUNNING)


COUNTED: dict[str, tuple[str, ...]] = {
    "cells_pending": (RUN_PENDING,),
    "cells_running": IN_FLIGHT,
    "cells_completed": (RUN_COMPLETED,),
    "cells_failed": (RUN_FAILED,),
    "cells_cancelled": (RUN_CANCELLED,),
}


def recount(session: Session, sweep_id: int, now: datetime | None = None) -> None:
    """Set the counters from the cells' statuses (after writing this transaction's own changes)."""
    session.flush()
    run_status.lock_sweep(session, sweep_id)

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


run_status.on_status_change(_count_cells)
