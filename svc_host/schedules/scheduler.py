"""The ``Scheduler``: a loop in the server that fires due schedules through the one run engine.

Each tick reads the due schedules, claims each fire by compare-and-set (so several servers on one store
fire it once), then applies the overlap policy and launches. What happened is stored on the schedule
(``last_outcome``, ``last_error``, ``last_run_id``/``last_sweep_id``); a launch that fails never stops
the loop or the next fire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from svc_host.domain.times import as_utc, utc_now
from svc_host.errors import ConfigError, SvcError
from svc_host.schedules import store as schedules
from svc_host.schedules.model import ScheduleSpec
from svc_host.schedules.timing import decide
from svc_host.store.database import Store
from svc_host.store.tables import ScheduleRecord

log = logging.getLogger("svc.schedules")

DEFAULT_TICK_SECONDS = 15.0


class Launcher(Protocol):
    """How the scheduler starts work and asks whether the previous start is still going."""

    async def launch(self, spec: ScheduleSpec) -> dict[str, Any]:
        """Start a run (``{"run_id": ...}``) or a sweep (``{"sweep_id": ...}``) with ``triggered_by: schedule``."""
        ...

    async def still_going(self, run_id: str | None, sweep_id: int | None) -> bool:
        """True while that run or sweep has not ended."""
        ...


@dataclass(frozen=True)
class Fire:
    """What one tick did with one schedule."""

    name: str
    outcome: str
    run_id: str | None = None
    sweep_id: int | None = None
    error: str | None = None


def tick_seconds(env: Mapping[str, str] | None) -> float:
    """``SVC_SCHEDULER_TICK``: seconds between rounds (default 15)."""
    raw = (env or {}).get("SVC_SCHEDULER_TICK")
    if not raw:
        return DEFAULT_TICK_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0.1 <= value <= 3600:
        raise ConfigError(f"SVC_SCHEDULER_TICK must be a number of seconds between 0.1 and 3600, not {raw!r}")
    return value


class Scheduler:
    """Fires due schedules every ``tick_seconds``; ``tick()`` does one round (tests call it with a fake clock)."""

    def __init__(
        self,
        store: Store,
        launcher: Launcher,
        *,
        clock: Callable[[], datetime] = utc_now,
        tick_seconds: float = DEFAULT_TICK_SECONDS,
    ) -> None:
        self.store = store
        self.launcher = launcher
        self.clock = clock
        self.tick_seconds = tick_seconds
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="svc-scheduler")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:  # a broken tick must not end scheduling for the life of the server
                log.exception("schedule tick failed")
            await asyncio.sleep(self.tick_seconds)

    async def tick(self) -> list[Fire]:
        """Fire (or skip, by policy) every schedule due now; returns what was done."""
        now = self.clock()
        fires = []
        for record in await self.store.run(schedules.due, now):
            fire = await self._handle(record, now)
            if fire is not None:
                fires.append(fire)
        return fires

    async def _handle(self, record: ScheduleRecord, now: datetime) -> Fire | None:
        if record.next_fire_at is None:  # ``due`` never returns one; a disabled schedule has no next fire
            return None
        spec = schedules.spec_of(record)
        decision = decide(
            spec,
            due_at=as_utc(record.next_fire_at),
            now=now,
            anchor=as_utc(record.created_at),
        )
        if decision.action == "wait":
            return None
        claimed = await self.store.run(
            schedules.claim, record.id, version=record.version, next_fire_at=decision.next_fire_at, now=now
        )
        if not claimed:  # another server took this fire, or the schedule was edited since we read it
            return None
        if decision.action == "skip_missed":
            fire = Fire(spec.name, "skipped_missed", error="missed while no server was running (missed: skip)")
        elif spec.overlap == "skip" and await self.launcher.still_going(record.last_run_id, record.last_sweep_id):
            fire = Fire(spec.name, "skipped_overlap", error="the previous run is still going (overlap: skip)")
        else:
            fire = await self._launch(spec)
        outcome = {"outcome": fire.outcome, "error": fire.error, "run_id": fire.run_id, "sweep_id": fire.sweep_id}
        await self.store.run(schedules.record_outcome, record.id, outcome, now=now)
        log.info("schedule %s: %s", spec.name, fire.outcome)
        return fire

    async def _launch(self, spec: ScheduleSpec) -> Fire:
        try:
            started = await self.launcher.launch(spec)
        except SvcError as exc:
            return Fire(spec.name, "failed", error=str(exc))
        except Exception as exc:  # recorded on the schedule, and the next fire still happens
            log.exception("schedule %s: launch failed", spec.name)
            return Fire(spec.name, "failed", error=f"internal error: {type(exc).__name__}")
        return Fire(spec.name, "fired", run_id=started.get("run_id"), sweep_id=started.get("sweep_id"))
