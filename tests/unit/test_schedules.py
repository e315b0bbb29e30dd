"""Schedules with a fake clock: timing (cron in a zone across DST, intervals), missed and overlap policies,
and exactly one fire per due time with two schedulers on one store."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from svc_host.domain.times import as_utc
from svc_host.errors import TransportError
from svc_host.schedules import manage
from svc_host.schedules import store as schedules
from svc_host.schedules.model import ScheduleSpec
from svc_host.schedules.scheduler import Scheduler
from svc_host.schedules.timing import decide, next_fire, upcoming
from svc_host.store.database import Store

T0 = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)


def spec(**fields: Any) -> ScheduleSpec:
    return ScheduleSpec.model_validate({"name": "nightly", "workflow": "train", **fields})


# --- the spec ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "give exactly one of cron"),
        ({"cron": "0 3 * * *", "every": 60}, "give exactly one of cron"),
        ({"cron": "0 3 * *"}, "must have five fields"),
        ({"cron": "61 3 * * *"}, "invalid cron '61 3 * * *': the minute (1st field) must be 0-59"),
        ({"every": 5}, "greater than or equal to 10"),
        ({"every": 60, "timezone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
        ({"every": 60, "name": "Bad Name"}, "should match pattern"),
        ({"every": 60, "missed": "later"}, "'skip' or 'run_once'"),
    ],
)
def test_bad_specs_say_what_is_wrong(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        spec(**fields)


# --- timing -----------------------------------------------------------------------------------------------------


def test_cron_keeps_local_time_across_a_dst_change() -> None:
    """Clocks in Berlin go from 02:00 CET to 03:00 CEST on 29 March 2026: 03:30 local is then 01:30 UTC, and
    02:30 does not exist that night, so a 02:30 schedule fires at 03:00 local (01:00 UTC)."""
    daily = spec(cron="30 3 * * *", timezone="Europe/Berlin")
    fires = upcoming(daily, after=T0, anchor=T0, count=3)
    assert [f.isoformat() for f in fires] == [
        "2026-03-29T01:30:00+00:00",
        "2026-03-30T01:30:00+00:00",
        "2026-03-31T01:30:00+00:00",
    ]
    gap = spec(cron="30 2 * * *", timezone="Europe/Berlin")
    assert next_fire(gap, after=T0, anchor=T0).isoformat() == "2026-03-29T01:00:00+00:00"
    assert next_fire(spec(cron="30 3 * * *"), after=T0, anchor=T0).isoformat() == "2026-03-29T03:30:00+00:00"


def test_intervals_count_from_the_anchor() -> None:
    every = spec(every=600)
    assert next_fire(every, after=T0, anchor=T0) == T0 + timedelta(minutes=10)
    assert next_fire(every, after=T0 + timedelta(minutes=10), anchor=T0) == T0 + timedelta(minutes=20)
    assert next_fire(every, after=T0 + timedelta(minutes=25, seconds=3), anchor=T0) == T0 + timedelta(minutes=30)


def test_decide_fires_on_time_and_applies_the_missed_policy() -> None:
    every = spec(every=600)
    due = T0 + timedelta(minutes=10)
    assert decide(every, due_at=due, now=due - timedelta(seconds=1), anchor=T0).action == "wait"
    on_time = decide(every, due_at=due, now=due + timedelta(seconds=20), anchor=T0)
    assert (on_time.action, on_time.next_fire_at) == ("fire", T0 + timedelta(minutes=20))
    after_outage = due + timedelta(hours=3, minutes=1)  # 18 fires missed
    skipped = decide(every, due_at=due, now=after_outage, anchor=T0)
    assert (skipped.action, skipped.next_fire_at) == ("skip_missed", T0 + timedelta(hours=3, minutes=20))
    once = decide(spec(every=600, missed="run_once"), due_at=due, now=after_outage, anchor=T0)
    assert (once.action, once.next_fire_at) == ("fire", T0 + timedelta(hours=3, minutes=20))


# --- the scheduler on a real store --------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class Launcher:
    """Records launches; ``going`` says whether the last run is still going; ``fail`` makes launches raise."""

    def __init__(self) -> None:
        self.launched: list[str] = []
        self.going = False
        self.fail: Exception | None = None

    async def launch(self, spec: ScheduleSpec) -> dict[str, Any]:
        await asyncio.sleep(0)
        if self.fail is not None:
            raise self.fail
        self.launched.append(spec.name)
        return {"run_id": f"run-{len(self.launched)}"}

    async def still_going(self, run_id: str | None, sweep_id: int | None) -> bool:
        return self.going and run_id is not None


@pytest.fixture
def store(database_url: str) -> Store:
    made = Store(database_url)
    yield made  # type: ignore[misc]
    made.close()


async def test_a_schedule_fires_once_per_due_time(store: Store) -> None:
    clock, launcher = Clock(), Launcher()
    scheduler = Scheduler(store, launcher, clock=clock)
    await manage.add(store, spec(every=600), now=clock.now)
    assert await scheduler.tick() == []
    clock.now += timedelta(minutes=10, seconds=5)
    fired = await scheduler.tick()
    assert [(f.name, f.outcome, f.run_id) for f in fired] == [("nightly", "fired", "run-1")]
    assert await scheduler.tick() == []  # same moment again: nothing more
    record = await store.run(schedules.get, "nightly")
    assert (record.last_outcome, record.last_run_id, record.fire_count) == ("fired", "run-1", 1)
    assert as_utc(record.next_fire_at) == T0 + timedelta(minutes=20)


async def test_two_servers_on_one_store_fire_each_due_time_once(store: Store, database_url: str) -> None:
    clock, launcher = Clock(), Launcher()
    other_store = Store(database_url)
    try:
        one, two = Scheduler(store, launcher, clock=clock), Scheduler(other_store, launcher, clock=clock)
        await manage.add(store, spec(every=600), now=clock.now)
        for step in range(1, 21):
            clock.now = T0 + step * timedelta(minutes=10) + timedelta(seconds=1)
            await asyncio.gather(one.tick(), two.tick(), one.tick(), two.tick())
        assert len(launcher.launched) == 20
        assert (await store.run(schedules.get, "nightly")).fire_count == 20
    finally:
        other_store.close()


async def test_an_edit_between_read_and_claim_wins(store: Store) -> None:
    clock, launcher = Clock(), Launcher()
    await manage.add(store, spec(every=600), now=clock.now)
    clock.now += timedelta(minutes=10, seconds=1)
    stale = (await store.run(schedules.due, clock.now))[0]
    await manage.set_enabled(store, "nightly", False, now=clock.now)
    claimed = await store.run(
        schedules.claim, stale.id, version=stale.version, next_fire_at=clock.now + timedelta(hours=1), now=clock.now
    )
    assert claimed is False
    assert await Scheduler(store, launcher, clock=clock).tick() == []
    assert launcher.launched == []


async def test_overlap_skip_and_allow(store: Store) -> None:
    clock, launcher = Clock(), Launcher()
    scheduler = Scheduler(store, launcher, clock=clock)
    await manage.add(store, spec(every=600), now=clock.now)
    await manage.add(store, spec(name="eager", every=600, overlap="allow"), now=clock.now)
    clock.now += timedelta(minutes=10, seconds=1)
    await scheduler.tick()
    launcher.going = True
    clock.now += timedelta(minutes=10)
    outcomes = {f.name: (f.outcome, f.error) for f in await scheduler.tick()}
    assert outcomes == {
        "eager": ("fired", None),
        "nightly": ("skipped_overlap", "the previous run is still going (overlap: skip)"),
    }


async def test_fires_missed_while_down_are_skipped_or_run_once(store: Store) -> None:
    clock, launcher = Clock(), Launcher()
    await manage.add(store, spec(every=600), now=clock.now)
    await manage.add(store, spec(name="catchup", every=600, missed="run_once"), now=clock.now)
    clock.now += timedelta(hours=5)  # the server was down
    outcomes = {f.name: f.outcome for f in await Scheduler(store, launcher, clock=clock).tick()}
    assert outcomes == {"catchup": "fired", "nightly": "skipped_missed"}
    assert launcher.launched == ["catchup"]
    clock.now += timedelta(minutes=10)
    assert len(await Scheduler(store, launcher, clock=clock).tick()) == 2  # back on the normal rhythm


async def test_a_failing_launch_is_recorded_and_the_next_fire_still_comes(store: Store) -> None:
    clock, launcher = Clock(), Launcher()
    scheduler = Scheduler(store, launcher, clock=clock)
    await manage.add(store, spec(every=600), now=clock.now)
    launcher.fail = TransportError("sbatch failed", argv=["sbatch"], exit_code=1, stderr="Invalid partition")
    clock.now += timedelta(minutes=10, seconds=1)
    assert [(f.outcome, f.error) for f in await scheduler.tick()] == [
        ("failed", "sbatch failed (exit 1): Invalid partition")
    ]
    launcher.fail = RuntimeError("boom")
    clock.now += timedelta(minutes=10)
    assert [(f.outcome, f.error) for f in await scheduler.tick()] == [("failed", "internal error: RuntimeError")]
    launcher.fail = None
    clock.now += timedelta(minutes=10)
    assert [f.outcome for f in await scheduler.tick()] == ["fired"]


async def test_disabled_schedules_do_not_fire_and_enabling_does_not_make_up_missed_fires(store: Store) -> None:
    clock, launcher = Clock(), Launcher()
    await manage.add(store, spec(every=600, enabled=False), now=clock.now)
    clock.now += timedelta(hours=2)
    assert await Scheduler(store, launcher, clock=clock).tick() == []
    record = await manage.set_enabled(store, "nightly", True, now=clock.now)
    assert as_utc(record.next_fire_at) == T0 + timedelta(hours=2, minutes=10)
    assert manage.view(record, now=clock.now, upcoming_count=2)["upcoming"] == [
        (T0 + timedelta(hours=2, minutes=10)).isoformat(),
        (T0 + timedelta(hours=2, minutes=20)).isoformat(),
    ]
