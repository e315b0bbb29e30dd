"""Repository functions for jobs: record a submission, apply what the monitor saw, read history."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from sqlmodel import Session, col, select

from svc_host.domain.efficiency import Totals
from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.times import as_utc
from svc_host.domain.usage import JobUsage
from svc_host.slurm.values import limit_seconds
from svc_host.store import day_stats
from svc_host.store.tables import JobRecord, JobTransition

LIVE_STATES = [state.value for state in JobState if not state.is_terminal]


def _aware(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


@dataclass(frozen=True)
class StateChange:
    """One transition the monitor recorded, for events."""

    transport: str
    job_id: str
    name: str
    from_state: str
    to_state: str
    raw_state: str
    exit_code: int | None


def add_job(
    session: Session,
    *,
    transport: str,
    job_id: str,
    name: str,
    source: str,
    resources: Mapping[str, object],
    command: Sequence[str],
    env_var_names: Sequence[str] = (),
    work_dir: str | None = None,
    stdout_path: str | None = None,
    stderr_path: str | None = None,
    now: datetime | None = None,
) -> JobRecord:
    """Record a job right after the scheduler accepted it (state PENDING)."""
    moment = _aware(now or datetime.now(UTC))
    record = JobRecord(
        transport=transport,
        job_id=job_id,
        name=name,
        source=source,
        state=JobState.PENDING.value,
        raw_state="PENDING",
        partition=_str_or_none(resources.get("partition")),
        nodes=_int_or_none(resources.get("nodes")),
        gpus=(_int_or_none(resources.get("gpus_per_node")) or 0) * (_int_or_none(resources.get("nodes")) or 1),
        resources=json.dumps(dict(resources), sort_keys=True),
        command=json.dumps(list(command)),
        env_var_names=json.dumps(sorted(env_var_names)),
        work_dir=work_dir,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
        submitted_at=moment,
        updated_at=moment,
    )
    session.add(record)
    session.flush()
    session.add(
        JobTransition(job_pk=_pk(record), from_state=None, to_state=record.state, raw_state="submitted", at=moment)
    )
    counters = day_stats.DayStatsDelta()
    counters.after(record)
    counters.apply(session)
    return record


def find_job(session: Session, transport: str, job_id: str) -> JobRecord | None:
    """The latest record of a job id on a transport (ids may repeat after a scheduler reset)."""
    query = (
        select(JobRecord)
        .where(JobRecord.transport == transport, JobRecord.job_id == job_id)
        .order_by(col(JobRecord.id).desc())
    )
    return session.exec(query).first()


def live_commands(session: Session, transport: str) -> dict[str, list[str]]:
    """The recorded command of every job svc tracks as live on ``transport``, by job id."""
    query = (
        select(JobRecord.job_id, JobRecord.command)
        .where(JobRecord.transport == transport, col(JobRecord.state).in_(LIVE_STATES))
        .order_by(col(JobRecord.id))
    )
    return {job_id: json.loads(command) for job_id, command in session.exec(query)}


def live_jobs(session: Session, transport: str | None = None) -> list[JobRecord]:
    """Jobs not yet in a terminal state, the monitor's work list."""
    query = select(JobRecord).where(col(JobRecord.state).in_(LIVE_STATES))
    if transport is not None:
        query = query.where(JobRecord.transport == transport)
    return list(session.exec(query.order_by(col(JobRecord.id))))


def live_job_ids(session: Session, transport: str) -> list[str]:
    """The ids of the live jobs of ``transport`` (what one monitor tick asks the scheduler about)."""
    query = select(JobRecord.job_id).where(JobRecord.transport == transport, col(JobRecord.state).in_(LIVE_STATES))
    return list(session.exec(query.order_by(col(JobRecord.id))))


def live_transports(session: Session) -> list[str]:
    query = select(JobRecord.transport).where(col(JobRecord.state).in_(LIVE_STATES)).distinct()
    return sorted(session.exec(query))


def apply_statuses(
    session: Session, transport: str, statuses: Mapping[str, JobStatus], now: datetime | None = None
) -> list[StateChange]:
    """Write what the scheduler reported for live jobs; returns the transitions it recorded."""
    moment = _aware(now or datetime.now(UTC))
    changes: list[StateChange] = []
    counters = day_stats.DayStatsDelta()
    # Rows locked (PostgreSQL; SQLite has one writer at a time): a second server applying the same change waits,
    # then finds the job no longer live, so neither a transition nor a day counter is written twice.
    live = select(JobRecord).where(JobRecord.transport == transport, col(JobRecord.state).in_(LIVE_STATES))
    for record in session.exec(live.order_by(col(JobRecord.id)).with_for_update()):
        status = statuses.get(record.job_id)
        if status is None:
            continue
        counters.before(record)
        before = record.state
        record.raw_state = status.raw_state
        record.exit_code = status.exit_code if status.exit_code is not None else record.exit_code
        record.elapsed_seconds = (
            status.elapsed_seconds if status.elapsed_seconds is not None else record.elapsed_seconds
        )
        record.partition = status.partition or record.partition
        record.nodes = status.nodes or record.nodes
        record.node_list = status.node_list or record.node_list
        limit = limit_seconds(status.time_limit) if status.time_limit else None  # the queue's, until accounting's
        record.time_limit_seconds = record.time_limit_seconds if limit is None else limit
        record.gpus = status.gpus if status.gpus is not None else record.gpus
        record.stdout_path = record.stdout_path or status.stdout_path
        record.stderr_path = record.stderr_path or status.stderr_path
        # The scheduler's times win over when a tick happened to see the change: a job can start and end
        # between two ticks, and a tick sees a start up to an interval late. The timeline takes the same times
        # (a start or an end is stamped once, from one source), so "Started" and the timeline agree.
        if record.started_at is not None and status.started_at not in (None, as_utc(record.started_at)):
            _restamp_start(session, _pk(record), status.started_at)
        record.started_at = status.started_at or record.started_at
        record.ended_at = status.ended_at or record.ended_at
        if status.state.value != before:
            record.state = status.state.value
            record.updated_at = moment
            if status.state is JobState.RUNNING and record.started_at is None:
                record.started_at = moment
            if status.state.is_terminal and status.ended_at is None:
                record.ended_at = moment
            session.add(
                JobTransition(
                    job_pk=_pk(record),
                    from_state=before,
                    to_state=record.state,
                    raw_state=status.raw_state,
                    at=_transition_time(record, moment),
                )
            )

            changes.append(
                StateChange(
                    transport, record.job_id, record.name, before, record.state, status.raw_state, record.exit_code
                )
            )
        counters.after(record)
        session.add(record)
    counters.apply(session)
    return changes


def _transition_time(record: JobRecord, seen: datetime) -> datetime:
    """When a job entered its (new) state: the start or end the scheduler gave, else when svc saw it."""
    state = JobState(record.state)
    if state is JobState.RUNNING and record.started_at is not None:
        return as_utc(record.started_at)
    if state.is_terminal and record.ended_at is not None:
        return as_utc(record.ended_at)
    return seen


def _restamp_start(session: Session, job_pk: int, started_at: datetime) -> None:
    """The scheduler's start of a job whose start a tick stamped before (accounting gives it once the job ended):
    its latest ``RUNNING`` transition takes it too."""
    query = (
        select(JobTransition)
        .where(JobTransition.job_pk == job_pk, JobTransition.to_state == JobState.RUNNING.value)
        .order_by(col(JobTransition.id).desc())
        .limit(1)
    )
    transition = session.exec(query).first()
    if transition is not None:
        transition.at = started_at
        session.add(transition)


def awaiting_usage(session: Session, transport: str, *, ended_since: datetime) -> list[str]:
    """Ids of the jobs of ``transport`` that ended after ``ended_since`` and whose usage svc has not read yet."""
    query = select(JobRecord.job_id).where(
        col(JobRecord.ended_at) >= _aware(ended_since),
        JobRecord.transport == transport,
        col(JobRecord.usage_at).is_(None),
        col(JobRecord.state).not_in(LIVE_STATES),
    )
    return list(dict.fromkeys(session.exec(query.order_by(col(JobRecord.id)))))


def record_usages(session: Session, transport: str, usages: Mapping[str, JobUsage], now: datetime | None = None) -> int:
    """Store what accounting says the ended jobs of ``transport`` were given and used; returns how many."""
    moment = _aware(now or datetime.now(UTC))
    counters = day_stats.DayStatsDelta()
    stored = 0
    for job_id, usage in sorted(usages.items()):
        latest = (
            select(JobRecord)
            .where(JobRecord.transport == transport, JobRecord.job_id == job_id)
            .order_by(col(JobRecord.id).desc())
            .limit(1)
            .with_for_update()  # another server recording the same usage waits, then finds it recorded
        )
        record = session.exec(latest).first()
        if record is None or record.usage_at is not None or not JobState(record.state).is_terminal:
            continue
        counters.before(record)
        record.alloc_cpus = usage.cpus
        record.mem_bytes = usage.mem_bytes
        record.max_rss_bytes = usage.max_rss_bytes
        record.cpu_time_ms = round(usage.cpu_seconds * 1000) if usage.cpu_seconds is not None else None
        # accounting may have no limit to say for a job that just ended: the queue's stays then
        if usage.time_limit_seconds is not None:
            record.time_limit_seconds = usage.time_limit_seconds
        record.gpu_util_percent = round(usage.gpu_util_percent) if usage.gpu_util_percent is not None else None
        record.gpus = usage.gpus if usage.gpus is not None else record.gpus
        record.elapsed_seconds = usage.elapsed_seconds if usage.elapsed_seconds is not None else record.elapsed_seconds
        record.usage_at = moment
        counters.after(record)
        session.add(record)
        stored += 1
    counters.apply(session)
    return stored


def transitions(session: Session, job_pk: int) -> list[JobTransition]:
    query = select(JobTransition).where(JobTransition.job_pk == job_pk).order_by(col(JobTransition.id))
    return list(session.exec(query))


def history(
    session: Session,
    *,
    limit: int = 100,
    offset: int = 0,
    transport: str | None = None,
    state: str | None = None,
    source: str | None = None,
) -> list[JobRecord]:
    """Most recent submissions first."""
    query = select(JobRecord)
    if transport is not None:
        query = query.where(JobRecord.transport == transport)
    if state is not None:
        query = query.where(JobRecord.state == state)
    if source is not None:
        query = query.where(JobRecord.source == source)
    return list(session.exec(query.order_by(col(JobRecord.id).desc()).offset(offset).limit(limit)))


def history_stats(
    session: Session, *, since: datetime | None = None, until: datetime | None = None, transport: str | None = None
) -> dict[str, object]:
    """Totals per outcome, the mean runtime of finished jobs submitted in ``[since, until)`` (over the jobs whose
    runtime is known: a job the scheduler lost has none) and their aggregate efficiency; of one cluster's jobs, or
    of every cluster's when ``transport`` is ``None``.

    Whole UTC days (what ``from``/``to`` dates give) are read from the per-day counters; the part of a range that
    starts or ends inside a day (at most a day at each end) is scanned from the jobs.
    """
    by_state: dict[str, list[int]] = {}
    low, high = since, until
    if low is not None and not _midnight(low):
        edge = _day_start(low) + timedelta(days=1)
        stop = edge if high is None or high > edge else high
        _merge(by_state, scanned_sums(session, low, stop, transport))
        low = stop
    if high is not None and not _midnight(high) and (low is None or high > low):
        edge = _day_start(high) if low is None else max(_day_start(high), low)
        _merge(by_state, scanned_sums(session, edge, high, transport))
        high = edge
    if low is None or high is None or low < high:
        first = day_stats.day_of(low) if low is not None else None
        last = day_stats.day_of(high - timedelta(days=1)) if high is not None else None
        _merge(by_state, day_stats.summed(session, first_day=first, last_day=last, transport=transport))
    total = completed = failed = cancelled = 0
    runtime_sum = runtime_n = 0
    efficiency = Totals()
    for state, vector in by_state.items():
        count, known_sum, known, *usage = vector
        total += count
        if state == JobState.COMPLETED.value:
            completed += count
        elif state == JobState.CANCELLED.value:
            cancelled += count
        elif JobState(state).is_terminal:
            failed += count
        runtime_sum += known_sum
        runtime_n += known
        efficiency.add(Totals(*usage))
    return {
        "total": total,
        "completed": completed,
        "failed": failed,
        "cancelled": cancelled,
        "avg_runtime_seconds": round(runtime_sum / runtime_n, 1) if runtime_n else 0.0,
        "efficiency": efficiency.summary(completed + failed + cancelled),
    }


def _midnight(moment: datetime | None) -> bool:
    return moment is None or _aware(moment).timetz().replace(tzinfo=None) == time()


def _day_start(moment: datetime) -> datetime:
    return datetime.combine(_aware(moment).date(), time(), tzinfo=UTC)


def _merge(into: dict[str, list[int]], sums: Mapping[str, list[int]]) -> None:
    for state, vector in sums.items():
        row = into.setdefault(state, [0] * len(vector))
        for index, value in enumerate(vector):
            row[index] += value


def scanned_sums(
    session: Session, since: datetime | None, until: datetime | None, transport: str | None = None
) -> dict[str, list[int]]:
    """The counters' sums over the jobs submitted in ``[since, until)`` (of one cluster, or every cluster), from the
    job rows themselves."""
    query = select(JobRecord)
    if transport is not None:
        query = query.where(JobRecord.transport == transport)
    if since is not None:
        query = query.where(JobRecord.submitted_at >= _aware(since))
    if until is not None:
        query = query.where(JobRecord.submitted_at < _aware(until))
    sums: dict[str, list[int]] = {}
    for record in session.exec(query):
        _, vector = day_stats.contribution(record)
        row = sums.setdefault(record.state, [0] * len(vector))
        for index, value in enumerate(vector):
            row[index] += value
    return sums


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _pk(record: JobRecord) -> int:
    if record.id is None:
        raise ValueError("job record has no id yet; flush the session first")
    return record.id
