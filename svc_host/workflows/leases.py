"""Repository functions for run ownership: which engine drives a run, and until when (its lease).

``claim`` is a compare-and-set, so two engines can never both take a run over.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Collection
from datetime import datetime

from sqlalchemy import or_, update
from sqlmodel import Session, col, select

from svc_host.store.jobs import utc
from svc_host.store.tables import WorkflowRunRecord
from svc_host.workflows.plan import RUN_PENDING, RUN_TERMINAL
from svc_host.workflows.store import now_utc


def claim(
    session: Session,
    run_id: str,
    owner: str,
    until: datetime,
    now: datetime | None = None,
    *,
    steal_from: str | None = None,
) -> bool:
    """Take a run over if nobody holds it, we do, the holder's lease ran out, or it is ``steal_from`` (a
    holder known to be dead)."""
    moment = now or now_utc()
    holders = [
        col(WorkflowRunRecord.owner).is_(None),
        col(WorkflowRunRecord.owner) == owner,
        col(WorkflowRunRecord.lease_until) < moment,
    ]
    if steal_from is not None:
        holders.append(col(WorkflowRunRecord.owner) == steal_from)
    result = session.execute(
        update(WorkflowRunRecord)
        .where(
            col(WorkflowRunRecord.id) == run_id,
            col(WorkflowRunRecord.status).not_in([*RUN_TERMINAL]),
            or_(*holders),
        )
        .values(owner=owner, lease_until=until)
    )
    return getattr(result, "rowcount", 0) == 1


def orphaned_runs(
    session: Session, now: datetime | None = None, *, dead_owner: Callable[[str], bool] | None = None
) -> list[tuple[str, str | None]]:
    """``(run id, owner)`` of runs nobody drives: not terminal, not a pending sweep cell, and held by nobody,
    by a lease that ran out, or by an owner ``dead_owner`` says is gone."""
    moment = now or now_utc()
    query = select(WorkflowRunRecord).where(col(WorkflowRunRecord.status).not_in([*RUN_TERMINAL, RUN_PENDING]))
    found = []
    for run in session.exec(query.order_by(col(WorkflowRunRecord.started_at))):
        lease = utc(run.lease_until)
        if run.owner is None or lease is None or lease < moment or (dead_owner is not None and dead_owner(run.owner)):
            found.append((run.id, run.owner))
    return found


def renew(session: Session, owner: str, until: datetime) -> list[str]:
    """Extend the lease of every run ``owner`` still holds; returns their ids."""
    session.execute(
        update(WorkflowRunRecord)
        .where(col(WorkflowRunRecord.owner) == owner, col(WorkflowRunRecord.status).not_in([*RUN_TERMINAL]))
        .values(lease_until=until)
    )
    query = select(WorkflowRunRecord.id).where(
        WorkflowRunRecord.owner == owner, col(WorkflowRunRecord.status).not_in([*RUN_TERMINAL])
    )
    return list(session.exec(query))


def release(session: Session, owner: str, run_ids: Collection[str] | None = None) -> None:
    """Give runs up (a clean shutdown): another engine may take them over at once."""
    query = update(WorkflowRunRecord).where(col(WorkflowRunRecord.owner) == owner)
    if run_ids is not None:
        query = query.where(col(WorkflowRunRecord.id).in_(list(run_ids)))
    session.execute(query.values(owner=None, lease_until=None))


def new_owner() -> str:
    """An engine's owner name: ``<host>:<pid>:<random>``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def owner_is_dead(owner: str) -> bool:
    """Whether ``owner`` (``host:pid:token``) was a process on this machine that has exited."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
