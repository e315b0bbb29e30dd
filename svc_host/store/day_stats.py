"""Per-day history counters (``job_day_stats``), kept in the transaction of every job write.

Every job counts into one row, its submission day (UTC), cluster and state, with a vector of sums (see
:func:`contribution`). A writer takes a job's contribution before and after it changes the job and
:class:`DayStatsDelta` applies the difference with one upsert per row touched, so the rows always equal what a
scan of ``job`` gives: ``GET /api/history/stats`` over all of history adds up a few hundred rows.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import Connection, func, text
from sqlmodel import Session, select

from svc_host.domain.efficiency import Totals
from svc_host.domain.jobs import JobState
from svc_host.store.stored_usage import usage_of
from svc_host.store.tables import JobDayStats, JobRecord

COLUMNS: Final = (
    "jobs",
    "elapsed_sum",
    "elapsed_n",
    "measured",
    "flagged",
    "cpu_used_ms",
    "cpu_given_ms",
    "mem_peak_bytes",
    "mem_given_bytes",
    "time_used_seconds",
    "time_given_seconds",
    "gpu_seconds",
)
Key = tuple[str, str, str]
"""(day, cluster, state): the row a job counts into."""

_UPSERT: Final = text(
    f"INSERT INTO job_cluster_day_stats (day, transport, state, {', '.join(COLUMNS)}) "  # noqa: S608 - constants
    f"VALUES (:day, :transport, :state, {', '.join(f':{name}' for name in COLUMNS)}) "
    f"ON CONFLICT (day, transport, state) DO UPDATE SET "
    f"{', '.join(f'{c} = job_cluster_day_stats.{c} + excluded.{c}' for c in COLUMNS)}"
)
"""Add a delta to one day's row, creating it if needed: an atomic increment on SQLite and PostgreSQL alike."""


def day_of(moment: datetime) -> str:
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return aware.date().isoformat()


def contribution(record: JobRecord) -> tuple[Key, tuple[int, ...]]:
    """The row a job counts into and what it adds there, in :data:`COLUMNS` order."""
    runtime = record.elapsed_seconds is not None and JobState(record.state).is_terminal
    usage = usage_of(record)
    totals = Totals.of(usage, state=record.state) if usage is not None else Totals()
    vector = (1, record.elapsed_seconds or 0 if runtime else 0, int(runtime), *totals.as_vector())
    return (day_of(record.submitted_at), record.transport, record.state), vector


class DayStatsDelta:
    """The changes one transaction makes to the counters: ``before(job)`` ahead of a change, ``after(job)``
    once it is made, ``apply(session)`` before the commit."""

    def __init__(self) -> None:
        self._delta: dict[Key, list[int]] = defaultdict(lambda: [0] * len(COLUMNS))

    def _add(self, record: JobRecord, sign: int) -> None:
        key, vector = contribution(record)
        row = self._delta[key]
        for index, value in enumerate(vector):
            row[index] += sign * value

    def before(self, record: JobRecord) -> None:
        self._add(record, -1)

    def after(self, record: JobRecord) -> None:
        self._add(record, 1)

    def apply(self, session: Session) -> None:
        self.apply_to(session.connection())

    def apply_to(self, conn: Connection) -> None:
        """``apply`` on a connection (what a migration is given)."""
        for (day, transport, state), vector in sorted(self._delta.items()):  # one lock order for concurrent writers
            if any(vector):
                values = dict(zip(COLUMNS, vector, strict=True))
                conn.execute(_UPSERT, {"day": day, "transport": transport, "state": state, **values})
        self._delta.clear()


def summed(
    session: Session, *, first_day: str | None = None, last_day: str | None = None, transport: str | None = None
) -> dict[str, list[int]]:
    """Each state's sums over the days in ``[first_day, last_day]`` (all of history when both are ``None``), of one
    cluster's jobs (every cluster's when ``transport`` is ``None``)."""
    query = select(JobDayStats.state, *(func.sum(getattr(JobDayStats, name)) for name in COLUMNS)).group_by(
        JobDayStats.state
    )
    if first_day is not None:
        query = query.where(JobDayStats.day >= first_day)
    if last_day is not None:
        query = query.where(JobDayStats.day <= last_day)
    if transport is not None:
        query = query.where(JobDayStats.transport == transport)
    return {str(row[0]): [int(value or 0) for value in row[1:]] for row in session.exec(query)}
