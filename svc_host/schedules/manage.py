"""Create, change and show schedules: what REST and the CLI share. Next fires are computed here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from svc_host.domain.times import as_utc, iso_utc
from svc_host.schedules import store as schedules
from svc_host.schedules.model import ScheduleSpec
from svc_host.schedules.timing import next_fire, upcoming
from svc_host.store.database import Store
from svc_host.store.tables import ScheduleRecord


async def add(store: Store, spec: ScheduleSpec, *, now: datetime) -> ScheduleRecord:
    return await store.run(schedules.create, spec, next_fire_at=next_fire(spec, after=now, anchor=now), now=now)


async def change(store: Store, spec: ScheduleSpec, *, now: datetime) -> ScheduleRecord:
    """Replace a schedule's spec; its next fire counts from now, so enabling one never fires missed runs."""
    current = await store.run(schedules.get, spec.name)
    anchor = as_utc(current.created_at)
    return await store.run(schedules.replace, spec, next_fire_at=next_fire(spec, after=now, anchor=anchor), now=now)


async def set_enabled(store: Store, name: str, enabled: bool, *, now: datetime) -> ScheduleRecord:
    current = await store.run(schedules.get, name)
    spec = schedules.spec_of(current).model_copy(update={"enabled": enabled})
    return await change(store, spec, now=now)


def view(record: ScheduleRecord, *, now: datetime, upcoming_count: int = 0) -> dict[str, Any]:
    """A schedule as REST and ``svc schedule --json`` show it: its spec, state, last outcome, next fires (UTC)."""
    spec = schedules.spec_of(record)
    body: dict[str, Any] = {
        **spec.model_dump(mode="json"),
        "next_fire_at": iso_utc(record.next_fire_at) if record.enabled else None,
        "last_fire_at": iso_utc(record.last_fire_at),
        "last_outcome": record.last_outcome,
        "last_error": record.last_error,
        "last_run_id": record.last_run_id,
        "last_sweep_id": record.last_sweep_id,
        "fire_count": record.fire_count,
        "created_at": iso_utc(record.created_at),
        "updated_at": iso_utc(record.updated_at),
    }
    if upcoming_count:
        times: list[datetime] = []
        if record.enabled and record.next_fire_at is not None:
            first = as_utc(record.next_fire_at)
            anchor = as_utc(record.created_at)
            times = [first, *upcoming(spec, after=first, anchor=anchor, count=upcoming_count - 1)]
        body["upcoming"] = [moment.isoformat() for moment in times]
    return body
