"""Repository functions for GPU use over time: record one sample per partition, prune, read a time range."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import delete
from sqlmodel import Session, col, select

from svc_host.domain.resources import ResourceSnapshot
from svc_host.domain.times import as_utc
from svc_host.store.tables import ResourceSample


def add_samples(session: Session, transport: str, snapshots: Sequence[ResourceSnapshot]) -> int:
    """Store one row per partition snapshot; returns how many were stored."""
    for snap in snapshots:
        session.add(
            ResourceSample(
                transport=transport,
                partition=snap.partition,
                at=snap.timestamp.astimezone(UTC),
                total_gpus=snap.total_gpus,
                gpus_in_use=snap.gpus_in_use,
                jobs_running=snap.jobs_running,
                nodes_total=snap.nodes_total,
                nodes_idle=snap.nodes_idle,
                nodes_down=snap.nodes_down,
            )
        )
    return len(snapshots)


def prune(session: Session, *, before: datetime, max_rows: int) -> int:
    """Delete samples older than ``before`` and, past ``max_rows``, the oldest; returns how many went."""
    removed = session.exec(delete(ResourceSample).where(col(ResourceSample.at) < before.astimezone(UTC)))
    gone = int(removed.rowcount or 0)
    cutoff = session.exec(
        select(ResourceSample.id).order_by(col(ResourceSample.id).desc()).offset(max_rows).limit(1)
    ).first()
    if cutoff is not None:
        extra = session.exec(delete(ResourceSample).where(col(ResourceSample.id) <= cutoff))
        gone += int(extra.rowcount or 0)
    return gone


def latest_at(session: Session, transport: str) -> datetime | None:
    """When ``transport`` was last sampled (by any server on this database)."""
    newest = session.exec(
        select(ResourceSample.at).where(ResourceSample.transport == transport).order_by(col(ResourceSample.at).desc())
    ).first()
    return as_utc(newest)


def samples_since(session: Session, transport: str, since: datetime) -> list[ResourceSample]:
    """Samples of ``transport`` from ``since`` on, oldest first (times UTC-aware)."""
    rows = session.exec(
        select(ResourceSample)
        .where(ResourceSample.transport == transport, col(ResourceSample.at) >= since.astimezone(UTC))
        .order_by(col(ResourceSample.at), col(ResourceSample.partition))
    ).all()
    for row in rows:
        row.at = as_utc(row.at) or row.at
    return list(rows)
