"""Sweeps in the store: creating a sweep with all its cells (a ``pending`` workflow run with ``sweep_id`` each) in one
transaction, and reading sweeps and their cells (each runs in one transaction through ``Store.run``/``call``).
Changes to cells are ``cell_moves``'s, the counters ``cell_counts``'s.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from svc_host.domain.times import utc_now
from svc_host.runtime.leases import Leases, table_of
from svc_host.store.tables import JobRecord, SweepRunRecord, WorkflowRunJob, WorkflowRunRecord
from svc_host.sweeps.cell_counts import recount
from svc_host.sweeps.status import PENDING, TERMINAL, Counters
from svc_host.workflows import store as runs
from svc_host.workflows.plan import (
    RUN_FAILED,
    RUN_PENDING,
    RUN_RUNNING,
)

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


def cells_by_id(session: Session, sweep_id: int, run_ids: Sequence[str]) -> dict[str, WorkflowRunRecord]:
    query = select(WorkflowRunRecord).where(
        WorkflowRunRecord.sweep_id == sweep_id, col(WorkflowRunRecord.id).in_(list(run_ids))
    )
    return {run.id: run for run in session.exec(query.execution_options(populate_existing=True))}
