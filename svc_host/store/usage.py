"""Repository reads for efficiency: the ``job`` rows of a workflow run's or a sweep's jobs (current attempts)."""

from __future__ import annotations

from sqlmodel import Session, col, select

from svc_host.store.tables import JobRecord, SweepRunRecord, WorkflowRunJob, WorkflowRunRecord


def run_jobs(session: Session, run_id: str) -> list[tuple[str, JobRecord]] | None:
    """``(workflow job name, job row)`` of each submitted job of a run, in the run's order; ``None``: no such run."""
    if session.get(WorkflowRunRecord, run_id) is None:
        return None
    query = (
        select(WorkflowRunJob.name, JobRecord)
        .join(JobRecord, col(JobRecord.id) == col(WorkflowRunJob.job_pk))
        .where(WorkflowRunJob.run_id == run_id)
        .order_by(col(WorkflowRunJob.position))
    )
    return [(name, record) for name, record in session.exec(query)]


def sweep_jobs(session: Session, sweep_id: int) -> list[tuple[str, str, JobRecord]] | None:
    """``(cell run id, workflow job name, job row)`` of each submitted job of a sweep's cells; ``None``: no such
    sweep."""
    if session.get(SweepRunRecord, sweep_id) is None:
        return None
    query = (
        select(WorkflowRunRecord.id, WorkflowRunJob.name, JobRecord)
        .join(WorkflowRunJob, col(WorkflowRunJob.run_id) == col(WorkflowRunRecord.id))
        .join(JobRecord, col(JobRecord.id) == col(WorkflowRunJob.job_pk))
        .where(WorkflowRunRecord.sweep_id == sweep_id)
        .order_by(col(JobRecord.id))
    )
    return [(run_id, name, record) for run_id, name, record in session.exec(query)]
