"""Repository functions of interactive sessions (``interactive_session``), for ``Store.call``.

A session moves by compare-and-set on its state (``move``): two svc processes watching one store (two servers on
one PostgreSQL) may both decide the same transition, and only the one whose write lands announces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import CursorResult, update
from sqlmodel import Session, col, select

from svc_host.store.tables import InteractiveSessionRecord, JobRecord

ENDED = "ended"
LIST_LIMIT = 500
"""The most sessions a list returns (newest first): ended ones stay in the store as jobs do."""


def add_session(
    session: Session,
    *,
    cluster: str,
    job_id: str,
    kind: str,
    fields: str,
    source: str,
    session_dir: str,
    start_timeout_seconds: int,
    time_limit_seconds: int | None = None,
    idle_minutes: int | None = None,
    now: datetime | None = None,
) -> InteractiveSessionRecord:
    """Record a session right after its job was submitted (state ``queued``)."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    record = InteractiveSessionRecord(
        cluster=cluster,
        job_id=job_id,
        kind=kind,
        fields=fields,
        source=source,
        state="queued",
        session_dir=session_dir,
        created_at=moment,
        time_limit_seconds=time_limit_seconds,
        start_timeout_seconds=start_timeout_seconds,
        idle_minutes=idle_minutes,
        updated_at=moment,
    )
    session.add(record)
    session.flush()
    return record


def find_session(session: Session, cluster: str, job_id: str) -> InteractiveSessionRecord | None:
    return session.get(InteractiveSessionRecord, (cluster, job_id))


def list_sessions(
    session: Session, cluster: str | None = None, *, limit: int = LIST_LIMIT
) -> list[InteractiveSessionRecord]:
    """Sessions newest first, of one cluster or of all."""
    query = select(InteractiveSessionRecord)
    if cluster is not None:
        query = query.where(InteractiveSessionRecord.cluster == cluster)
    query = query.order_by(col(InteractiveSessionRecord.created_at).desc()).limit(limit)
    return list(session.exec(query).all())


def open_sessions(session: Session) -> list[InteractiveSessionRecord]:
    """Every session not ended yet, of every cluster: what one watch tick looks at."""
    query = select(InteractiveSessionRecord).where(InteractiveSessionRecord.state != ENDED)
    return list(session.exec(query.order_by(col(InteractiveSessionRecord.created_at))).all())


def move(
    session: Session, cluster: str, job_id: str, *, expected: str, changes: Mapping[str, Any], now: datetime
) -> bool:
    """Apply ``changes`` (columns and values, ``state`` among them or not) when the session is still in state
    ``expected``; True when this call made the change."""
    table = InteractiveSessionRecord.__table__  # type: ignore[attr-defined]  # SQLModel declares it on table models
    result = session.execute(
        update(table)
        .where(table.c.cluster == cluster, table.c.job_id == job_id, table.c.state == expected)
        .values(**dict(changes), updated_at=now.astimezone(UTC))
    )
    return isinstance(result, CursorResult) and result.rowcount == 1


def request_stop(session: Session, cluster: str, job_id: str, now: datetime) -> None:
    """Note that someone asked to stop the session (its end is then ``stopped``), unless it already ended."""
    table = InteractiveSessionRecord.__table__  # type: ignore[attr-defined]
    session.execute(
        update(table)
        .where(
            table.c.cluster == cluster,
            table.c.job_id == job_id,
            table.c.state != ENDED,
            table.c.stop_requested_at.is_(None),
        )
        .values(stop_requested_at=now.astimezone(UTC), updated_at=now.astimezone(UTC))
    )


def note_activity(session: Session, activity: Mapping[tuple[str, str], datetime]) -> None:
    """Move each open session's ``last_activity`` forward to the time given (never back)."""
    table = InteractiveSessionRecord.__table__  # type: ignore[attr-defined]
    for (cluster, job_id), at in activity.items():
        moment = at.astimezone(UTC)
        session.execute(
            update(table)
            .where(
                table.c.cluster == cluster,
                table.c.job_id == job_id,
                table.c.state != ENDED,
                (table.c.last_activity.is_(None)) | (table.c.last_activity < moment),
            )
            .values(last_activity=moment)
        )


def open_with_jobs(session: Session) -> list[tuple[InteractiveSessionRecord, JobRecord | None]]:
    """Every open session with its job's latest row (the monitor's word on its state), in one transaction."""
    pairs = []
    for row in open_sessions(session):
        job = session.exec(
            select(JobRecord)
            .where(JobRecord.transport == row.cluster, JobRecord.job_id == row.job_id)
            .order_by(col(JobRecord.id).desc())
            .limit(1)
        ).first()
        pairs.append((row, job))
    return pairs
