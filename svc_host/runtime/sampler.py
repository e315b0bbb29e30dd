"""GPU use per partition over time: one resources query per watched cluster and interval, stored (bounded) and
announced.

The server's Host runs one sampler: every ``interval`` seconds it asks each watched cluster (the server's
default, the clusters with live jobs and the ones someone looked at lately, a bounded few: see
:mod:`svc_host.runtime.clusters_in_use`) for its per-partition snapshot (one sinfo and one squeue, whatever the
number of open dashboards), stores a row per partition, prunes rows past ``keep_days`` (and past ``max_rows``),
and emits ``resources.sampled`` so open dashboards update their gauges without asking the scheduler themselves.
The clusters are asked side by side: one that does not answer delays and fails only its own sample.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from svc_host.domain.resources import ResourceSnapshot
from svc_host.errors import SvcError
from svc_host.plugin_core.records import Event
from svc_host.runtime.transport_registry import TransportRegistry
from svc_host.settings.env_numbers import env_number
from svc_host.store import resource_samples as repo
from svc_host.store.database import Store
from svc_host.store.tables import ResourceSample

log = logging.getLogger(__name__)

MAX_POINTS = 720
"""Points per partition a history answer holds at most; longer ranges are averaged into time buckets."""


@dataclass(frozen=True)
class SamplerSettings:
    interval: float = 60.0
    """Seconds between samples (``SVC_RESOURCE_SAMPLE_SECONDS``; 0 turns sampling off)."""
    keep_days: float = 7.0
    """How long samples are kept (``SVC_RESOURCE_HISTORY_DAYS``)."""
    max_rows: int = 500_000
    """A hard bound on stored samples, whatever the number of partitions."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None) -> SamplerSettings:
        env = env or {}
        return cls(
            interval=env_number(env, "SVC_RESOURCE_SAMPLE_SECONDS", cls.interval, minimum=0),
            keep_days=env_number(env, "SVC_RESOURCE_HISTORY_DAYS", cls.keep_days, minimum=0.01),
        )


class ResourceSampler:
    """Samples the partitions of the watched clusters (``watched()`` names them) on a fixed interval while the
    server runs."""

    def __init__(
        self,
        store: Store,
        transports: TransportRegistry,
        watched: Callable[[], Awaitable[list[str]]],
        emit: Callable[[Event], None],
        settings: SamplerSettings,
    ) -> None:
        self.store = store
        self.transports = transports
        self.watched = watched
        self.emit = emit
        self.settings = settings
        self._task: asyncio.Task[None] | None = None
        self._failing: set[str] = set()
        self.samples_taken = 0

    def start(self) -> None:
        if self.settings.interval > 0 and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run(), name="svc-resource-sampler")

    async def sample_watched(self) -> list[str]:
        """One sample of every watched cluster, side by side; returns the clusters sampled. A cluster's failure is
        logged (once until it answers again) and costs the others nothing."""
        names = await self.watched()
        results = await asyncio.gather(*(self.sample(name) for name in names), return_exceptions=True)
        for name, result in zip(names, results, strict=True):
            if not isinstance(result, BaseException):
                self._failing.discard(name)
            elif not isinstance(result, SvcError):
                log.error("resource sampling of %s crashed", name, exc_info=result)
            elif name not in self._failing:  # no scheduler right now: try again next interval, say so once
                self._failing.add(name)
                log.warning(
                    "resource sampling of %s failed (retrying every %gs): %s", name, self.settings.interval, result
                )
        return names

    async def sample(self, transport: str) -> list[ResourceSnapshot]:
        """Take one sample of ``transport`` now: query, store (unless another server just did), prune, emit;
        returns the snapshots."""
        # A fresh answer that also serves GET /api/resources for the next second.
        snapshots = (await self.transports.snapshots.resources(transport, max_age=0)).value
        now = datetime.now(UTC)
        before = now - timedelta(days=self.settings.keep_days)
        fresh_after = now - timedelta(seconds=self.settings.interval / 2)
        if await self.store.run(_record, transport, snapshots, before, fresh_after, self.settings.max_rows):
            self.samples_taken += 1
        self.emit(
            Event(
                name="resources.sampled",
                payload={"transport": transport, "partitions": [snap.model_dump(mode="json") for snap in snapshots]},
            )
        )
        return snapshots

    async def _run(self) -> None:
        while True:
            try:
                await self.sample_watched()
            except Exception:  # e.g. the store: the next interval tries again
                log.exception("resource sampling crashed")
            await asyncio.sleep(self.settings.interval)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _record(
    session: Any,
    transport: str,
    snapshots: Sequence[ResourceSnapshot],
    before: datetime,
    fresh_after: datetime,
    max_rows: int,
) -> bool:
    """Store the sample unless another server on this database sampled the transport since ``fresh_after``
    (several ``svc serve`` on one PostgreSQL keep one series, not one each); prune. Returns whether it stored."""
    latest = repo.latest_at(session, transport)
    if latest is not None and latest > fresh_after:
        return False
    repo.add_samples(session, transport, snapshots)
    repo.prune(session, before=before, max_rows=max_rows)
    return True


def history_series(
    samples: Sequence[ResourceSample], *, since: datetime, until: datetime, max_points: int = MAX_POINTS
) -> list[dict[str, Any]]:
    """Samples grouped by partition, each a list of points ``{timestamp, total_gpus, gpus_in_use, jobs_running,
    nodes_down}`` oldest first; past ``max_points`` per partition, equal time buckets are averaged."""
    by_partition: dict[str, list[ResourceSample]] = {}
    for row in samples:
        by_partition.setdefault(row.partition, []).append(row)
    bucket = max((until - since) / max_points, timedelta(seconds=1))
    series = []
    for partition in sorted(by_partition):
        rows = by_partition[partition]
        points = [_point([row]) for row in rows] if len(rows) <= max_points else _bucketed(rows, since, bucket)
        series.append({"partition": partition, "points": points})
    return series


def _bucketed(rows: list[ResourceSample], since: datetime, bucket: timedelta) -> list[dict[str, Any]]:
    groups: dict[int, list[ResourceSample]] = {}
    for row in rows:
        groups.setdefault(int((row.at - since) / bucket), []).append(row)
    return [_point(group) for _, group in sorted(groups.items())]


def _point(rows: list[ResourceSample]) -> dict[str, Any]:
    def mean(name: str) -> float:
        total: float = sum(getattr(row, name) for row in rows)
        return round(total / len(rows), 2)

    return {
        "timestamp": rows[-1].at.isoformat(),
        "total_gpus": mean("total_gpus"),
        "gpus_in_use": mean("gpus_in_use"),
        "jobs_running": mean("jobs_running"),
        "nodes_down": mean("nodes_down"),
    }
