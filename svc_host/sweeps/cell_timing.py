"""A sweep cell's own times and state, from its jobs' records: a cell of a sweep submitted as one job array is
``running`` (its run is in flight) from the array's submission on, while Slurm may keep its task PENDING for
long (an array's ``%`` limit, a hold). What a user sees of a cell (queued or running, when it started, how long
it took) is its jobs', as the monitor stores them from squeue and accounting: not the run's, which started
with the sweep."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from svc_host.domain.jobs import JobState
from svc_host.domain.times import iso_utc
from svc_host.store.tables import JobRecord, WorkflowRunJob, WorkflowRunRecord


@dataclass(frozen=True)
class JobTimes:
    """One current job of a cell: its state and the Start and End the monitor stored (None while unknown)."""

    state: str
    started_at: datetime | None
    ended_at: datetime | None


def cell_jobs_times(session: Session, sweep_id: int) -> dict[str, list[JobTimes]]:
    """The current job of every submitted job of a sweep's cells, as stored: cell id -> its jobs' times."""
    query = (
        select(WorkflowRunJob.run_id, JobRecord.state, JobRecord.started_at, JobRecord.ended_at)
        .join(WorkflowRunRecord, col(WorkflowRunRecord.id) == col(WorkflowRunJob.run_id))
        .join(JobRecord, col(JobRecord.id) == col(WorkflowRunJob.job_pk))
        .where(WorkflowRunRecord.sweep_id == sweep_id)
        .order_by(col(WorkflowRunJob.position))
    )
    found: dict[str, list[JobTimes]] = {}
    for run_id, state, started_at, ended_at in session.exec(query):
        found.setdefault(run_id, []).append(JobTimes(state, started_at, ended_at))
    return found


def cell_timing(jobs: Sequence[JobTimes]) -> dict[str, Any]:
    """``job_state``, ``job_started_at``, ``job_ended_at`` of a cell from its current jobs.

    ``job_state`` is ``PENDING`` while every job of the cell waits in the queue (the cell is queued, not running),
    ``RUNNING`` while one runs, else the state of its last job (None before any was submitted). The cell started
    when its first job started and ended when its last one ended, once every job has."""
    if not jobs:
        return {"job_state": None, "job_started_at": None, "job_ended_at": None}
    states = [job.state for job in jobs]
    if JobState.RUNNING.value in states:
        state = JobState.RUNNING.value
    elif all(s == JobState.PENDING.value for s in states):
        state = JobState.PENDING.value
    else:
        state = states[-1]
    starts = [job.started_at for job in jobs if job.started_at is not None]
    ends = [job.ended_at for job in jobs]
    all_ended = all(JobState(s).is_terminal for s in states) and all(end is not None for end in ends)
    return {
        "job_state": state,
        "job_started_at": iso_utc(min(starts)) if starts else None,
        "job_ended_at": iso_utc(max(end for end in ends if end is not None)) if all_ended and starts else None,
    }
