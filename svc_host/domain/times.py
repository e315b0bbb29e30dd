"""Time, the one way every part of svc handles it: aware UTC datetimes inside, ISO 8601 with the zone outside, and
``H:MM:SS`` for elapsed time (pure)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload


def utc_now() -> datetime:
    """Now, aware, in UTC."""
    return datetime.now(UTC)


@overload
def as_utc(moment: datetime) -> datetime: ...
@overload
def as_utc(moment: None) -> None: ...
def as_utc(moment: datetime | None) -> datetime | None:
    """``moment`` in UTC, aware. Databases hand stored times back naive; every stored time was written in UTC."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def iso_utc(moment: datetime | None) -> str | None:
    """``moment`` as ISO 8601 in UTC with its zone (``2026-11-27T03:00:00+00:00``), as every face shows times."""
    aware = as_utc(moment)
    return aware.isoformat() if aware is not None else None


def clock(seconds: int | None) -> str:
    """Seconds as ``H:MM:SS`` (hours grow past 24), the REST spec's elapsed_time form; ``""`` when unknown."""
    if seconds is None:
        return ""
    hours, rest = divmod(max(0, seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
