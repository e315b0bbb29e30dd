"""When a schedule fires, and what to do when a tick finds it due. Pure: the clock is an argument."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from cronsim import CronSim

from svc_host.schedules.model import ScheduleSpec

LATE_GRACE = timedelta(minutes=2)
"""A fire found due later than this was missed (no server was running at its time), not merely late."""

Action = Literal["wait", "fire", "skip_missed"]


def next_fire(spec: ScheduleSpec, *, after: datetime, anchor: datetime) -> datetime:
    """The first fire strictly after ``after`` (UTC). Cron is evaluated in the schedule's zone, so ``0 3 * * *``
    stays at 03:00 local across DST changes; an interval counts from ``anchor`` (when the schedule was made)."""
    if spec.every is not None:
        step = timedelta(seconds=spec.every)
        if after < anchor:
            return anchor + step
        return anchor + ((after - anchor) // step + 1) * step
    local = after.astimezone(spec.zone())
    return next(CronSim(spec.cron or "", local)).astimezone(UTC)


def upcoming(spec: ScheduleSpec, *, after: datetime, anchor: datetime, count: int) -> list[datetime]:
    """The next ``count`` fires after ``after``."""
    times: list[datetime] = []
    for _ in range(count):
        after = next_fire(spec, after=after, anchor=anchor)
        times.append(after)
    return times


@dataclass(frozen=True)
class Decision:
    """What a tick does with a schedule: its action and the next fire to store in either case."""

    action: Action
    next_fire_at: datetime


def decide(spec: ScheduleSpec, *, due_at: datetime, now: datetime, anchor: datetime) -> Decision:
    """``wait`` before ``due_at``; at it, ``fire``; long past it (the server was down), apply ``missed``.

    However many fires were missed, at most one run results, and the next fire is the first one after ``now``.
    """
    if now < due_at:
        return Decision("wait", due_at)
    following = next_fire(spec, after=now, anchor=anchor)
    if now - due_at <= LATE_GRACE or spec.missed == "run_once":
        return Decision("fire", following)
    return Decision("skip_missed", following)
