"""Repository functions for workflow runs (each runs in one transaction through ``Store.run``/``call``).

Compare-and-set updates (``begin_submit``, ``set_run_status``, ``claim``) make every decision that must
happen once (a submission, a terminal state, taking a run over) safe against a second engine on the same
database.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Update as UpdateStatement
from sqlalchemy import bindparam, update
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, col, select

from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import as_utc, utc_now
from svc_host.runtime.leases import Leases, table_of
from svc_host.store import jobs as job_repo
from svc_host.store.tables import JobRecord, SweepRunRecord, WorkflowRunAttempt, WorkflowRunJob, WorkflowRunRecord
from svc_host.workflows.model import Dependency
from svc_host.workflows.plan import (
    LIVE,
    RUN_PENDING,
    RUN_TERMINAL,
    SUBMITTING,
    WAITING,
    JobView,
    Update,
)
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


_CAS_ATTEMPTS = 3
"""A lost compare-and-set re-reads and tries again; the second attempt already holds the write lock."""

StatusHook = Callable[[Session, WorkflowRunRecord, str], None]
_status_hooks: list[StatusHook] = []


def on_status_change(hook: StatusHook) -> None:
    """Call ``hook(session, run, old_status)`` inside the transaction of every run status change (sweeps
    keep their cell counters exact with it: the counter update commits together with the change, or not at
    all). Hooks must only touch the session."""
    if hook not in _status_hooks:
        _status_hooks.append(hook)


def set_run_status(
    session: Session,
    run_id: str,
    status: str,
    *,
    error: str | None = None,
    only_from: Collection[str] | None = None,
    now: datetime | None = None,
) -> str | None:
    """Move a run to ``status`` unless it is terminal (or not in ``only_from``); returns the old status,
    or None when nothing changed (``move_run``)."""
    moved = move_run(session, run_id, status, error=error, only_from=only_from, now=now)
    return moved.before if moved is not None else None


@dataclass(frozen=True)
class RunMove:
    """A run status change made in the store: the run's row as the change left it, and its old status."""

    run: WorkflowRunRecord
    before: str
    after: str


def move_run(
    session: Session,
    run_id: str,
    status: str,
    *,
    error: str | None = None,
    only_from: Collection[str] | None = None,
    now: datetime | None = None,
) -> RunMove | None:
    """Move a run to ``status`` unless it is terminal (or not in ``only_from``); returns the change with the run
    as it left it (what announcing it needs, without a read of its own), or None when nothing changed.

    A compare-and-set: the ``UPDATE`` names the status it read in its ``WHERE``, so a change that another
    transaction committed in between (a cancel racing a completion) is never overwritten. The loser re-reads
    (now under the write lock it took with its attempt) and decides again: a terminal status is final.

    A sweep cell's sweep row is locked first (``lock_sweep``), as every writer of a sweep's cells does.
    """
    moment = now or utc_now()
    run = session.get(WorkflowRunRecord, run_id, populate_existing=True)
    if run is not None and run.sweep_id is not None:
        lock_sweep(session, run.sweep_id)
    for attempt in range(_CAS_ATTEMPTS):
        if attempt:  # the status changed since it was read: read it again
            run = session.get(WorkflowRunRecord, run_id, populate_existing=True)
        if run is None:
            return None
        current = run.status
        if current in RUN_TERMINAL or current == status:
            return None
        if only_from is not None and current not in only_from:
            return None
        values: dict[str, Any] = {"status": status, "updated_at": moment}
        if error is not None:
            values["error"] = error
        if status in RUN_TERMINAL:
            values["completed_at"] = moment
        statement = _status_update(tuple(values))
        result = session.execute(statement, {"run_id": run_id, "current": current, **_new_values(values)})
        if getattr(result, "rowcount", 0) != 1:
            continue
        for key, value in values.items():  # the row as written, without reading it back
            set_committed_value(run, key, value)
        for hook in _status_hooks:
            hook(session, run, current)
        return RunMove(run, current, status)
    return None


@functools.cache
def _status_update(names: tuple[str, ...]) -> UpdateStatement:
    """The compare-and-set ``UPDATE`` of a run's status setting the columns ``names`` (built once per shape, so
    SQLAlchemy compiles it once and never rebuilds it; values are bound as ``run_id``, ``current``, ``new_<name>``).
    """
    columns = WorkflowRunRecord.__table__.c  # type: ignore[attr-defined]
    return (
        update(WorkflowRunRecord)
        .where(col(WorkflowRunRecord.id) == bindparam("run_id"), col(WorkflowRunRecord.status) == bindparam("current"))
        .values({name: bindparam(f"new_{name}", type_=columns[name].type) for name in names})
        .execution_options(synchronize_session=False)
    )


def _new_values(values: Mapping[str, Any]) -> dict[str, Any]:
    return {f"new_{name}": value for name, value in values.items()}


def move_run_along(session: Session, run_id: str, path: Sequence[tuple[str, Collection[str]]]) -> list[RunMove]:
    """Status changes that happen back to back (``(status, only_from)`` each, in turn) in one transaction; the
    changes made (their ``run`` is the row as the last change left it)."""
    moves = (move_run(session, run_id, status, only_from=only_from) for status, only_from in path)
    return [moved for moved in moves if moved is not None]


_LOCK_SWEEP = select(SweepRunRecord.id).where(SweepRunRecord.id == bindparam("sweep_id")).with_for_update()


def lock_sweep(session: Session, sweep_id: int) -> None:
    """Lock a sweep's row until the transaction ends (``SELECT ... FOR UPDATE``; SQLite's one write lock does it
    there). Every transaction that writes a sweep's cells takes it before it touches them, so on PostgreSQL two
    such transactions wait on each other in one order and never deadlock; the counters are recounted under it."""
    session.execute(_LOCK_SWEEP, {"sweep_id": sweep_id})


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


def keep_sweep_array(session: Session, sweep_id: int, array_job_id: str) -> None:
    """Record the job array a reconciled cell was found in as its sweep's, if the sweep has none recorded yet (the
    launch that submitted it was cut off, or lost the race with the reconcile, before it recorded the array)."""
    session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.id) == sweep_id, col(SweepRunRecord.array_job_id).is_(None))
        .values(array_job_id=array_job_id)
        .execution_options(synchronize_session=False)
    )


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
