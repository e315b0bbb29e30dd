"""Writes to a workflow run's job rows: a submission's three steps (``begin_submit`` marks the row, then
``finish_submit`` or ``abort_submit``), the engine's decisions (``apply_updates``) and a cancel's final status
(each runs in one transaction through ``Store.run``/``call``).

``begin_submit`` is a compare-and-set: a job is submitted once, even with a second engine on the same database.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import update
from sqlmodel import Session, col, select

from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import utc_now
from svc_host.store import jobs as job_repo
from svc_host.store.tables import WorkflowRunAttempt, WorkflowRunJob, WorkflowRunRecord
from svc_host.workflows.plan import SUBMITTING, WAITING, Update


def apply_updates(session: Session, run_id: str, updates: Mapping[str, Update], now: datetime | None = None) -> None:
    moment = now or utc_now()
    if not updates:
        return
    query = select(WorkflowRunJob).where(WorkflowRunJob.run_id == run_id, col(WorkflowRunJob.name).in_(list(updates)))
    for job in session.exec(query):
        change = updates[job.name]
        if job.status == SUBMITTING:  # a submission in flight decides this row itself
            continue
        job.status = change.status
        if change.retries_left is not None:
            job.retries_left = change.retries_left
        if change.interruptions_left is not None:
            job.interruptions_left = change.interruptions_left
        job.next_retry_at = change.next_retry_at
        if change.error is not None:
            job.error = change.error
        if change.resources:
            definition = json.loads(job.definition)
            definition["resources"] = {**definition.get("resources", {}), **change.resources}
            job.definition = json.dumps(definition)
        if change.exclude is not None:
            nodes = [*(job.exclude_nodes or "").split(","), change.exclude]
            job.exclude_nodes = ",".join(node for node in dict.fromkeys(nodes) if node)
        if change.note is not None and job.job_pk is not None:
            session.execute(
                update(WorkflowRunAttempt)
                .where(col(WorkflowRunAttempt.run_job_id) == job.id, col(WorkflowRunAttempt.job_pk) == job.job_pk)
                .values(reason=change.note)
                .execution_options(synchronize_session=False)
            )
        job.updated_at = moment
        session.add(job)


def begin_submit(session: Session, job_row: int, expected: str, now: datetime | None = None) -> int | None:
    """Mark a job ``SUBMITTING`` (the crash marker) if it is still ``expected``; returns the new attempt."""
    moment = now or utc_now()
    attempt: int | None = session.execute(
        update(WorkflowRunJob)
        .where(col(WorkflowRunJob.id) == job_row, col(WorkflowRunJob.status) == expected)
        .values(status=SUBMITTING, attempt=WorkflowRunJob.attempt + 1, submitting_since=moment, updated_at=moment)
        .returning(col(WorkflowRunJob.attempt))
        .execution_options(synchronize_session=False)
    ).scalar_one_or_none()
    return attempt


def finish_submit(
    session: Session,
    job_row: int,
    *,
    transport: str,
    job_id: str,
    definition: JobDefinition,
    stdout_path: str | None,
    stderr_path: str | None,
    now: datetime | None = None,
) -> str:
    """Record an accepted submission: a ``job`` row (source ``workflow``, tracked by the monitor) and the
    run's job row ``PENDING`` with the new id, in one transaction. Returns the run's status (a run
    cancelled meanwhile must cancel this job too)."""
    moment = now or utc_now()
    job = session.get(WorkflowRunJob, job_row)
    if job is None:
        raise LookupError(f"workflow job row {job_row} vanished")
    record = job_repo.add_job(
        session,
        transport=transport,
        job_id=job_id,
        name=definition.name,
        source="workflow",
        resources=definition.resources.model_dump(),
        command=_command_words(definition),
        env_var_names=list(definition.environment.env_vars),
        work_dir=definition.work_dir,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
        now=moment,
    )
    job.status = "PENDING"
    job.job_id = job_id
    job.job_pk = record.id
    if job.id is not None and record.id is not None:
        session.add(WorkflowRunAttempt(run_job_id=job.id, attempt=job.attempt, job_pk=record.id))
    job.job_ids = json.dumps([*json.loads(job.job_ids), job_id])
    job.submitting_since = None
    job.next_retry_at = None
    job.updated_at = moment
    session.add(job)
    run = session.get(WorkflowRunRecord, job.run_id)
    return run.status if run is not None else ""


def abort_submit(
    session: Session,
    job_row: int,
    *,
    status: str,
    undo_attempt: bool = False,
    retries_left: int | None = None,
    next_retry_at: datetime | None = None,
    error: str | None = None,
    now: datetime | None = None,
) -> None:
    """Leave ``SUBMITTING`` without a job: back to where it was (``undo_attempt``), retry later, or final."""
    job = session.get(WorkflowRunJob, job_row)
    if job is None or job.status != SUBMITTING:
        return
    job.status = status
    if undo_attempt:
        job.attempt = max(0, job.attempt - 1)
    if retries_left is not None:
        job.retries_left = retries_left
    job.next_retry_at = next_retry_at
    job.submitting_since = None
    job.error = error
    job.updated_at = now or utc_now()
    session.add(job)


def _command_words(definition: JobDefinition) -> list[str]:
    if isinstance(definition.command, list):
        return list(definition.command)
    if definition.command is not None:
        return [definition.command]
    return []


def cancel_unsubmitted(session: Session, run_id: str, status: str, now: datetime | None = None) -> None:
    """Give every job that never reached the scheduler (or waits for a retry) a final ``status``."""
    moment = now or utc_now()
    session.execute(
        update(WorkflowRunJob)
        .where(col(WorkflowRunJob.run_id) == run_id, col(WorkflowRunJob.status).in_([WAITING, "RETRYING"]))
        .values(status=status, next_retry_at=None, updated_at=moment)
    )
