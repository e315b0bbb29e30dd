"""What a schedule is: which workflow to run, when, with what, and what to do about missed and overlapping fires."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from svc_host.domain.validation_words import worded_pattern

_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
MIN_INTERVAL_SECONDS = 10
SCHEDULE_NAME_PATTERN = worded_pattern(
    r"^[a-z0-9][a-z0-9_-]{0,63}$", "1-64 lowercase letters, digits, '-' or '_', starting with a letter or digit"
)
"""Shorter intervals would make a shared cluster's scheduler do little else."""

MissedPolicy = Literal["skip", "run_once"]
OverlapPolicy = Literal["skip", "allow"]


_CRON_WORDS = {
    "Bad minute": "the minute (1st field) must be 0-59",
    "Bad hour": "the hour (2nd field) must be 0-23",
    "Bad day-of-month": "the day of the month (3rd field) must be 1-31",
    "Bad month": "the month (4th field) must be 1-12 or jan-dec",
    "Bad day-of-week": "the day of the week (5th field) must be 0-7 or sun-sat",
}
"""cronsim's one-word reasons, said with the field's place and range."""


class ScheduleSpec(BaseModel):
    """A schedule as a user writes it (REST body, ``svc schedule add``). Exactly one of ``cron`` and ``every``.

    ``missed``: what to do when fires were missed while no server was running: ``skip`` them (default) or
    ``run_once`` (one run now, however many were missed). ``overlap``: ``skip`` a fire while the schedule's
    previous run (or sweep) is still going (default), or ``allow`` it.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=SCHEDULE_NAME_PATTERN, description="lowercase letters, digits, - and _")
    workflow: str = Field(min_length=1, max_length=255, description="a workflow file name, as in /api/workflows")
    cron: str | None = Field(default=None, max_length=200, description="five-field cron, in `timezone`")
    every: int | None = Field(
        default=None, ge=MIN_INTERVAL_SECONDS, le=366 * 24 * 3600, description="a fixed interval in seconds"
    )
    timezone: str = Field(default="UTC", max_length=64, description="an IANA zone such as Europe/Berlin")
    args: dict[str, str | int | float | bool] = Field(default_factory=dict)
    transport: str | None = Field(default=None, max_length=64)
    mount: str | None = Field(default=None, max_length=64)
    sweep: dict[str, Any] | None = Field(default=None, description="a sweep spec, as in POST /api/workflows/{name}/run")
    enabled: bool = True
    missed: MissedPolicy = "skip"
    overlap: OverlapPolicy = "skip"
    description: str = Field(default="", max_length=500)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}; use an IANA name such as UTC or Europe/Berlin") from None
        return value

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = " ".join(value.split())
        if len(value.split(" ")) != 5:
            raise ValueError(f"cron {value!r} must have five fields: minute hour day-of-month month day-of-week")
        try:
            CronSim(value, _EPOCH)
        except CronSimError as exc:
            raise ValueError(f"invalid cron {value!r}: {_CRON_WORDS.get(str(exc), str(exc))}") from None
        return value

    @model_validator(mode="after")
    def _one_timing(self) -> ScheduleSpec:
        if (self.cron is None) == (self.every is None):
            raise ValueError("give exactly one of cron (e.g. '0 3 * * *') and every (seconds)")
        return self

    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)
