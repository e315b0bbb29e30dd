"""When each session last carried traffic, as this process's way in saw it: the proxy notes every request and
WebSocket message here (cheap: a dict write), and the watch moves the times into the store once per tick, where
the idle timeout reads them (so the clock survives a restart of ``svc serve``)."""

from __future__ import annotations

from datetime import UTC, datetime

_SEEN: dict[tuple[str, str], datetime] = {}


def note(cluster: str, job_id: str) -> None:
    """The session carried traffic just now."""
    _SEEN[(cluster, job_id)] = datetime.now(UTC)


def take() -> dict[tuple[str, str], datetime]:
    """What was noted since the last call (and forget it)."""
    seen = dict(_SEEN)
    _SEEN.clear()
    return seen
