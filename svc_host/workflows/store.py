"""Workflow runs in the store: creating a run with its jobs, and reading runs, their jobs and attempts (each runs in
one transaction through ``Store.run``/``call``). Status changes are ``run_status``'s, job row writes ``job_rows``'s.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import as_utc, utc_now
from svc_host.runtime.leases import Leases, table_of
from svc_host.store.tables import JobRecord, WorkflowRunAttempt, WorkflowRunJob, WorkflowRunRecord
from svc_host.workflows.model import Dependency
from svc_host.workflows.plan import LIVE, RUN_PENDING, RUN_TERMINAL, WAITING, JobView
from svc_host.workflows.retries import Escalate, OnInterruption, RetryPolicy

LIVE_STATUSES = frozenset(state.value for state in LIVE)
RUN_LEASES: Leases[str] = Leases(table_of(WorkflowRunRecord), terminal=RUN_TERMINAL, idle=frozenset({RUN_PENDING}))
"""Which engine drives a run; a pending sweep cell waits for its sweep's orchestrator, not for adoption."""


@dataclass(frozen=True)
class NewJob:
    """A job row to create with its run."""

    name: str
    dependencies: Sequence[Dependency]
    definition: JobDefinition
    retry: int
    retry_delay: int
    on_interruption: OnInterruption = field(default_factory=OnInterruption)
    escalate: Escalate = field(default_factory=Escalate)

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(retry=self.retry, on_interruption=self.on_interruption, escalate=self.escalate)


@dataclass(frozen=True)
class NewRun:
    """A run row to create (see ``prepare.PreparedRun.new_run``)."""

    workflow_name: str
    yaml_path: str
    args: Mapping[str, Any]
    selection: Mapping[str, Any]
    transport: str
    mount: str | None
    sync_mounts: Sequence[str]
    jobs: Sequence[NewJob]


def insert_run(
    session: Session,
    run: NewRun,
    *,
    run_id: str,
    status: str,
    triggered_by: str,
    sweep_id: int | None = None,
    owner: str | None = None,
    lease_until: datetime | None = None,
    now: datetime | None = None,
) -> WorkflowRunRecord:
    """Create a run and its jobs (``WAITING``). Sweeps call this for every cell inside their own transaction."""
    moment = now or utc_now()
    record = WorkflowRunRecord(
        id=run_id,
        workflow_name=run.workflow_name,
        yaml_path=run.yaml_path,
        status=status,
        started_at=moment,
        updated_at=moment,
        args=json.dumps(dict(run.args), sort_keys=True, default=str),
        selection=json.dumps(dict(run.selection), sort_keys=True),
        transport=run.transport,
        mount=run.mount,
        sync_mounts=json.dumps(list(run.sync_mounts)),
        triggered_by=triggered_by,
        sweep_id=sweep_id,
        owner=owner,
        lease_until=lease_until,
    )
    session.add(record)
    session.flush()
    for position, job in enumerate(run.jobs):
        session.add(
            WorkflowRunJob(
                run_id=run_id,
                name=job.name,
                position=position,
                depends_on=json.dumps([str(d) for d in job.dependencies]),
                definition=stored_definition(job.definition),
                status=WAITING,
                retries_left=job.retry,
                retry_delay=job.retry_delay,
                retry_policy=job.policy.model_dump_json(),
                interruptions_left=job.on_interruption.retries,
                updated_at=moment,
            )
        )
    return record


def stored_definition(definition: JobDefinition) -> str:
    """A job's definition as stored: its environment variables by name only, each with an empty value.

    Values are never stored (they are often tokens); the engine reads them again from the workflow file and the
    configuration when it submits the job (``svc_host.workflows.prepare.env_values``).
    """
    names = dict.fromkeys(definition.environment.env_vars, "")
    environment = definition.environment.model_copy(update={"env_vars": names})
    return definition.model_copy(update={"environment": environment}).model_dump_json(exclude={"dependency"})


@functools.lru_cache(maxsize=256)  # a run's jobs, and a sweep's cells, mostly share one policy; it is frozen
def policy_of(text: str) -> RetryPolicy:
    """A job row's stored ``retry_policy``."""
    return RetryPolicy.model_validate_json(text)


@dataclass(frozen=True)
class RunSnapshot:
    """A run, its jobs in order and the ``job`` rows of their current attempts, read in one transaction."""

    run: WorkflowRunRecord
    jobs: list[WorkflowRunJob]
    records: dict[int, JobRecord]

    def record_of(self, job: WorkflowRunJob) -> JobRecord | None:
        return self.records.get(job.job_pk) if job.job_pk is not None else None

    def job_status(self, job: WorkflowRunJob) -> str:
        """What the interfaces show: the monitor's state while the row says live, else the row's status."""
        record = self.record_of(job)
        if job.status in LIVE_STATUSES and record is not None:
            return record.state
        return job.status

    def views(self) -> list[JobView]:
        views = []
        for job in self.jobs:
            record = self.record_of(job)
            resources = json.loads(job.definition).get("resources", {})
            views.append(
                JobView(
                    name=job.name,
                    dependencies=tuple(Dependency.parse(entry) for entry in json.loads(job.depends_on)),
                    status=job.status,
                    record_state=record.state if record is not None else None,
                    job_id=job.job_id,
                    retries_left=job.retries_left,
                    retry_delay=job.retry_delay,
                    next_retry_at=as_utc(job.next_retry_at),
                    attempt=job.attempt,
                    exit_code=record.exit_code if record is not None else None,
                    error=job.error,
                    policy=policy_of(job.retry_policy),
                    interruptions_left=job.interruptions_left,
                    node=record.node_list if record is not None else None,
                    memory=resources.get("memory_per_node"),
                    time_limit=resources.get("time_limit"),
                )
            )
        return views

    @property
    def terminal(self) -> bool:
        return self.run.status in RUN_TERMINAL


def snapshot(session: Session, run_id: str) -> RunSnapshot | None:
    run = session.get(WorkflowRunRecord, run_id)
    if run is None:
        return None
    return _snapshots(session, [run])[0]


def snapshots(
    session: Session,
    *,
    limit: int = 200,
    offset: int = 0,
    status: str | None = None,
    workflow_name: str | None = None,
    sweep_id: int | None = None,
) -> list[RunSnapshot]:
    """Runs, newest first."""
    query = select(WorkflowRunRecord)
    if status is not None:
        query = query.where(WorkflowRunRecord.status == status)
    if workflow_name is not None:
        query = query.where(WorkflowRunRecord.workflow_name == workflow_name)
    if sweep_id is not None:
        query = query.where(WorkflowRunRecord.sweep_id == sweep_id)
    query = query.order_by(col(WorkflowRunRecord.started_at).desc(), col(WorkflowRunRecord.id)).offset(offset)
    return _snapshots(session, list(session.exec(query.limit(limit))))


def _snapshots(session: Session, runs: list[WorkflowRunRecord]) -> list[RunSnapshot]:
    ids = [run.id for run in runs]
    jobs: dict[str, list[WorkflowRunJob]] = {run_id: [] for run_id in ids}
    if ids:
        query = select(WorkflowRunJob).where(col(WorkflowRunJob.run_id).in_(ids)).order_by(col(WorkflowRunJob.position))
        for job in session.exec(query):
            jobs[job.run_id].append(job)
    pks = [job.job_pk for rows in jobs.values() for job in rows if job.job_pk is not None]
    records: dict[int, JobRecord] = {}
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        records.update({r.id: r for r in session.exec(select(JobRecord).where(col(JobRecord.id).in_(chunk))) if r.id})
    return [RunSnapshot(run=run, jobs=jobs[run.id], records=records) for run in runs]


@dataclass(frozen=True)
class Attempt:
    """One attempt of a run's job: its ``job`` row and the retry decision made when it ended."""

    job: str
    attempt: int
    record: JobRecord
    reason: str | None


def attempts(session: Session, run_id: str) -> list[Attempt]:
    """Every attempt of a run's jobs, in the run's job order, oldest attempt first."""
    query = (
        select(WorkflowRunJob.name, WorkflowRunAttempt, JobRecord)
        .join(WorkflowRunAttempt, col(WorkflowRunAttempt.run_job_id) == col(WorkflowRunJob.id))
        .join(JobRecord, col(JobRecord.id) == col(WorkflowRunAttempt.job_pk))
        .where(WorkflowRunJob.run_id == run_id)
        .order_by(col(WorkflowRunJob.position), col(WorkflowRunAttempt.attempt))
    )
    return [Attempt(name, row.attempt, record, row.reason) for name, row, record in session.exec(query)]


def sweep_place(session: Session, run_id: str) -> tuple[int, str] | None:
    """A sweep cell's place among its sweep's submitted cells (a job attempted) by ``started_at``, then id, and the
    id of the first of them: its task in the sweep's job array and the array's marker (the cells of an array are
    launched together, a microsecond apart in matrix order; cells cancelled before are not in it). None for a
    plain run."""
    run = session.get(WorkflowRunRecord, run_id)
    if run is None or run.sweep_id is None:
        return None
    submitted = (
        select(WorkflowRunRecord.id, WorkflowRunRecord.started_at)
        .join(WorkflowRunJob, col(WorkflowRunJob.run_id) == col(WorkflowRunRecord.id))
        .where(WorkflowRunRecord.sweep_id == run.sweep_id, col(WorkflowRunJob.attempt) > 0)
        .order_by(col(WorkflowRunRecord.started_at), col(WorkflowRunRecord.id))
    )
    order = [cell for cell, _ in dict.fromkeys(session.exec(submitted).all())]
    return (order.index(run_id), order[0]) if run_id in order else None


def runs_for_jobs(session: Session, transport: str, job_ids: Collection[str]) -> set[str]:
    """The runs (not terminal) whose current attempts include one of ``job_ids`` on ``transport``."""
    if not job_ids:
        return set()
    query = (
        select(WorkflowRunJob.run_id)
        .join(WorkflowRunRecord, col(WorkflowRunRecord.id) == col(WorkflowRunJob.run_id))
        .where(
            col(WorkflowRunJob.job_id).in_(list(job_ids)),
            WorkflowRunRecord.transport == transport,
            col(WorkflowRunRecord.status).not_in([*RUN_TERMINAL]),
        )
    )
    return set(session.exec(query))


def upstream_names(session: Session, transport: str, job_ids: Collection[str]) -> dict[str, list[str]]:
    """The upstream job names of each of ``job_ids`` that is a workflow job's current attempt on ``transport``
    (the newest run wins when the scheduler reused an id); jobs of no workflow are absent."""
    if not job_ids:
        return {}
    query = (
        select(WorkflowRunJob.job_id, WorkflowRunJob.depends_on)
        .join(WorkflowRunRecord, col(WorkflowRunRecord.id) == col(WorkflowRunJob.run_id))
        .where(col(WorkflowRunJob.job_id).in_(list(job_ids)), WorkflowRunRecord.transport == transport)
        .order_by(col(WorkflowRunRecord.started_at))
    )
    return {
        job_id: [Dependency.parse(entry).job for entry in json.loads(depends_on)]
        for job_id, depends_on in session.exec(query)
        if job_id is not None
    }
