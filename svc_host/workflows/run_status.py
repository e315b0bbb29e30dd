"""A workflow run's status changes, and the sweep lock every writer of a sweep's cells takes first (each runs in
one transaction through ``Store.run``/``call``).

Every change is a compare-and-set (``move_run``): a terminal state is decided once, even with a second engine on
the same database.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Update as UpdateStatement
from sqlalchemy import bindparam, update
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, col, select

from svc_host.domain.times import utc_now
from svc_host.store.tables import SweepRunRecord, WorkflowRunRecord
from svc_host.workflows.plan import RUN_TERMINAL

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


def keep_sweep_array(session: Session, sweep_id: int, array_job_id: str) -> None:
    """Record the job array a reconciled cell was found in as its sweep's, if the sweep has none recorded yet (the
    launch that submitted it was cut off, or lost the race with the reconcile, before it recorded the array)."""
    session.execute(
        update(SweepRunRecord)
        .where(col(SweepRunRecord.id) == sweep_id, col(SweepRunRecord.array_job_id).is_(None))
        .values(array_job_id=array_job_id)
        .execution_options(synchronize_session=False)
    )
