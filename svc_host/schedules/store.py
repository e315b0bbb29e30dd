"""Repository functions for schedules (each runs in one transaction through ``Store.run``/``call``).

A fire is claimed with a compare-and-set on ``version``: ``UPDATE ... SET version = version + 1,
next_fire_at = <next> WHERE id = ? AND version = <seen>``. Of several servers on one store that find the
same schedule due, exactly one updates the row and fires; the others see 0 rows and move on. Every edit
bumps ``version`` too, so a server holding a stale copy never fires a schedule that was changed meanwhile.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from svc_host.errors import ConflictError, NotFoundError
from svc_host.schedules.model import ScheduleSpec
from svc_host.store.tables import ScheduleRecord


def spec_of(record: ScheduleRecord) -> ScheduleSpec:
    return ScheduleSpec.model_validate(json.loads(record.spec))


def _spec_json(spec: ScheduleSpec) -> str:
    return json.dumps(spec.model_dump(mode="json"), sort_keys=True)


def create(session: Session, spec: ScheduleSpec, *, next_fire_at: datetime, now: datetime) -> ScheduleRecord:
    if session.exec(select(ScheduleRecord.id).where(ScheduleRecord.name == spec.name)).first() is not None:
        raise ConflictError(f"schedule {spec.name!r} already exists")
    record = ScheduleRecord(
        name=spec.name,
        spec=_spec_json(spec),
        enabled=spec.enabled,
        next_fire_at=next_fire_at,
        created_at=now,
        updated_at=now,
    )
    session.add(record)
    try:
        session.flush()
    except IntegrityError:  # another process created it between the check and the insert
        raise ConflictError(f"schedule {spec.name!r} already exists") from None
    return record


def get(session: Session, name: str) -> ScheduleRecord:
    record = session.exec(select(ScheduleRecord).where(ScheduleRecord.name == name)).first()
    if record is None:
        raise NotFoundError(f"schedule {name!r} not found")
    return record


def all_schedules(session: Session) -> list[ScheduleRecord]:
    return list(session.exec(select(ScheduleRecord).order_by(col(ScheduleRecord.name))))


def replace(session: Session, spec: ScheduleSpec, *, next_fire_at: datetime, now: datetime) -> ScheduleRecord:
    """Store a new spec for an existing schedule; its fire history stays."""
    record = get(session, spec.name)
    record.spec = _spec_json(spec)
    record.enabled = spec.enabled
    record.next_fire_at = next_fire_at
    record.updated_at = now
    record.version += 1
    session.add(record)
    return record


def delete(session: Session, name: str) -> None:
    session.delete(get(session, name))


def due(session: Session, now: datetime) -> list[ScheduleRecord]:
    """Enabled schedules whose next fire is at or before ``now``."""
    query = select(ScheduleRecord).where(col(ScheduleRecord.enabled).is_(True), col(ScheduleRecord.next_fire_at) <= now)
    return list(session.exec(query.order_by(col(ScheduleRecord.next_fire_at))))


def claim(session: Session, schedule_id: int | None, *, version: int, next_fire_at: datetime, now: datetime) -> bool:
    """Take this fire (see the module docstring): True for exactly one caller per ``version``."""
    result = session.execute(
        update(ScheduleRecord)
        .where(col(ScheduleRecord.id) == schedule_id, col(ScheduleRecord.version) == version)
        .values(version=ScheduleRecord.version + 1, next_fire_at=next_fire_at, updated_at=now)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def record_outcome(session: Session, schedule_id: int | None, outcome: dict[str, Any], *, now: datetime) -> None:
    """What the last fire did: ``outcome`` (fired, skipped_missed, skipped_overlap, failed), error, run or sweep."""
    values: dict[str, Any] = {
        "last_fire_at": now,
        "last_outcome": outcome["outcome"],
        "last_error": outcome.get("error"),
        "updated_at": now,
    }
    if outcome["outcome"] == "fired":
        values["last_run_id"] = outcome.get("run_id")
        values["last_sweep_id"] = outcome.get("sweep_id")
        values["fire_count"] = ScheduleRecord.fire_count + 1
    session.execute(update(ScheduleRecord).where(col(ScheduleRecord.id) == schedule_id).values(**values))
