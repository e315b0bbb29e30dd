"""Repository functions for sweep ownership: which svc process launches a sweep's cells, until when.

As for workflow runs (``svc_host.workflows.leases``), and with the same owner names: a sweep is driven by one
orchestrator at a time, the one holding its lease; ``claim`` is a compare-and-set.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import or_, update
from sqlmodel import Session, col, select

from svc_host.store.jobs import utc
from svc_host.store.tables import SweepRunRecord
from svc_host.sweeps.status import TERMINAL
from svc_host.workflows.store import now_utc


def claim(
    session: Session,
    sweep_id: int,
    owner: str,
    until: datetime,
    now: datetime | None = None,
    *,
    steal_from: str | None = None,
) -> bool:
    """Take a sweep over if nobody holds it, we do, its lease ran out, or it is ``steal_from`` (known dead)."""
    holders = [
        col(SweepRunRecord.owner).is_(None),
        col(SweepRunRecord.owner) == owner,
        col(SweepRunRecord.lease_until) < (now or now_utc()),
    ]
    if steal_from is not None:
        holders.append(col(SweepRunRecord.owner) == steal_from)
    result = session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.id) == sweep_id, col(SweepRunRecord.status).not_in([*TERMINAL]), or_(*holders))
        .values(owner=owner, lease_until=until)
        .execution_options(synchronize_session=False)
    )
    return getattr(result, "rowcount", 0) == 1


def orphaned(
    session: Session, now: datetime | None = None, *, dead_owner: Callable[[str], bool] | None = None
) -> list[tuple[int, str | None]]:
    """``(sweep id, owner)`` of sweeps not terminal that nobody drives (no owner, lease ran out, owner dead)."""
    moment = now or now_utc()
    found = []
    query = select(SweepRunRecord).where(col(SweepRunRecord.status).not_in([*TERMINAL]))
    for sweep in session.exec(query.order_by(col(SweepRunRecord.started_at))):
        lease = utc(sweep.lease_until)
        gone = sweep.owner is not None and dead_owner is not None and dead_owner(sweep.owner)
        if sweep.id is not None and (sweep.owner is None or lease is None or lease < moment or gone):
            found.append((sweep.id, sweep.owner))
    return found


def renew(session: Session, owner: str, until: datetime) -> list[int]:
    """Extend the lease of every sweep ``owner`` still holds; returns their ids."""
    session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.owner) == owner, col(SweepRunRecord.status).not_in([*TERMINAL]))
        .values(lease_until=until)
        .execution_options(synchronize_session=False)
    )
    query = select(SweepRunRecord.id).where(
        SweepRunRecord.owner == owner, col(SweepRunRecord.status).not_in([*TERMINAL])
    )
    return [sweep_id for sweep_id in session.exec(query) if sweep_id is not None]


def release(session: Session, owner: str) -> None:
    """Give every sweep of ``owner`` up (a clean shutdown): another process may take them over at once."""
    session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.owner) == owner)
        .values(owner=None, lease_until=None)
        .execution_options(synchronize_session=False)
    )
