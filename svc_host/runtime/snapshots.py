"""Scheduler snapshots: the last answer of each list query per transport, served while at most ``max_age``
seconds old, so the scheduler's load does not grow with the number of clients.

``GET /api/jobs`` and ``GET /api/resources`` read the queue and the partitions from here; a refresh is one
command whatever the number of waiting requests (single flight per transport and query), and the monitor's
tick and the resource sampler refresh the same snapshots, so an open dashboard usually costs no command of
its own. On a Slurm transport a resources refresh runs only sinfo: its running jobs come from the queue
snapshot (at most ``max_age`` old itself). Each answer says how old it is (``Snapshot.age``; REST sends it as
``X-Svc-Snapshot-Age``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from svc_host.concurrency.single_flight import SingleFlight
from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.resources import NodeInfo, ResourceSnapshot
from svc_host.slurm.resources import summarize, summarize_cluster
from svc_host.transports.base import SlurmTransport, Transport
from svc_host.transports.site_limits import LIMITS_MAX_AGE, read_site_limits

if TYPE_CHECKING:
    from svc_host.slurm.identity import ClusterIdentity
    from svc_host.slurm.limits import SiteLimits

V = TypeVar("V")
W = TypeVar("W")

Key = tuple[Hashable, ...]

MAX_AGE = 1.0
"""Seconds a list answer may be old by default."""
IDENTITY_MAX_AGE = 24 * 3600.0
"""Seconds the answer to "which cluster is this" is kept: a cluster is renamed or moved to another controller
rarely, and a profile whose connection settings change forgets it with its other answers."""


@dataclass(frozen=True, eq=False)
class Snapshot(Generic[V]):
    """One scheduler answer and when it arrived (the event loop's clock)."""

    value: V
    taken_at: float
    _derived: dict[str, asyncio.Future[Any]] = field(default_factory=dict, repr=False)

    @property
    def age(self) -> float:
        """Seconds since the scheduler answered."""
        return max(0.0, asyncio.get_running_loop().time() - self.taken_at)

    async def derive(self, key: str, build: Callable[[V], Awaitable[W]]) -> W:
        """``build(value)`` once per snapshot and ``key``, shared by every reader of this snapshot (the encoded
        body of a list response: fifty clients in one second cost one encoding). A failure is not kept."""
        built = self._derived.get(key)
        if built is None:
            built = self._derived[key] = asyncio.ensure_future(build(self.value))
            built.add_done_callback(lambda done: self._forget_failure(key, done))
        result: W = await asyncio.shield(built)
        return result

    def _forget_failure(self, key: str, built: asyncio.Future[Any]) -> None:
        if built.cancelled() or built.exception() is not None:
            self._derived.pop(key, None)


_KEPT_ACROSS_CHANGES = frozenset({"limits", "identity"})
"""Answers a submit or a cancel does not change (``SchedulerSnapshots.changed`` leaves them)."""


class SchedulerSnapshots:
    """The queue and resources answers of every transport, shared by every client of this process."""

    def __init__(self, transport: Callable[[str], Transport], *, max_age: float = MAX_AGE) -> None:
        self.transport = transport
        self.max_age = max_age
        self._latest: dict[Key, Snapshot[Any]] = {}
        self._flights: SingleFlight[tuple[Key, int], Snapshot[Any]] = SingleFlight()
        self._generations: dict[str, int] = {}
        self._kept: dict[Hashable, Any] = {}

    async def queue(self, transport: str, *, max_age: float | None = None) -> Snapshot[list[JobStatus]]:
        """Every job in the scheduler's queue, at most ``max_age`` seconds old (0: a query now, or the one
        running now)."""
        return await self._get(("queue", transport), lambda: self.transport(transport).queue(), max_age)

    async def user_queue(self, transport: str, user: str) -> Snapshot[list[JobStatus]]:
        """One user's jobs, at most ``max_age`` seconds old: taken from the whole queue while its snapshot is
        fresh, else one query of that user's jobs alone (``squeue --user``: what a person types, and cheaper
        for the scheduler than the whole queue), kept and shared like every other answer."""
        whole = self.fresh(("queue", transport))
        if whole is not None:
            return Snapshot([job for job in whole.value if job.user == user], whole.taken_at)
        return await self._get(("queue", transport, user), lambda: self.transport(transport).queue(user=user), None)

    async def job(self, transport: str, job_id: str) -> Snapshot[JobStatus | None]:
        """One job's status (``Transport.statuses``: ``squeue`` of that job alone, accounting once it left the
        queue), at most ``max_age`` seconds old; ``None`` when the scheduler does not know it."""
        fetch = self.transport(transport).statuses
        # one answer per job ever asked about would pile up in a long-lived server: only live ones are kept
        for key in [key for key, kept in self._latest.items() if key[0] == "job" and kept.age > self.max_age]:
            del self._latest[key]
        return await self._get(("job", transport, job_id), lambda: self._one(fetch, job_id), None)

    @staticmethod
    async def _one(fetch: Callable[[list[str]], Awaitable[dict[str, JobStatus]]], job_id: str) -> JobStatus | None:
        return (await fetch([job_id])).get(job_id)

    def fresh(self, key: Key) -> Snapshot[Any] | None:
        """The answer kept for ``key`` (``("queue", transport)``...) while at most ``max_age`` seconds old; no query."""
        latest = self._latest.get(key)
        return latest if latest is not None and latest.age <= self.max_age else None

    async def resources(
        self, transport: str, partition: str | None = None, *, max_age: float | None = None
    ) -> Snapshot[list[ResourceSnapshot]]:
        """Availability per partition (or of one partition), at most ``max_age`` seconds old."""
        return await self._get(
            ("resources", transport, partition), lambda: self._resources(transport, partition), max_age
        )

    async def resources_total(self, transport: str, *, max_age: float | None = None) -> Snapshot[ResourceSnapshot]:
        """Availability of the whole cluster (each node counted once), at most ``max_age`` seconds old."""
        return await self._get(("resources_total", transport), lambda: self._resources_total(transport), max_age)

    async def _resources(self, name: str, partition: str | None) -> list[ResourceSnapshot]:
        transport = self.transport(name)
        if not isinstance(transport, SlurmTransport):  # it summarizes on its own
            return await transport.resources(partition)
        # every partition's nodes, even for one: which other partitions share its nodes is part of the answer
        nodes, running = await self._nodes_and_running(transport, name)
        return summarize(nodes, running, now=datetime.now(UTC), partition=partition)

    async def _resources_total(self, name: str) -> ResourceSnapshot:
        transport = self.transport(name)
        if not isinstance(transport, SlurmTransport):
            return await transport.resources_total()
        nodes, running = await self._nodes_and_running(transport, name)
        return summarize_cluster(nodes, running, now=datetime.now(UTC))

    async def _nodes_and_running(self, transport: SlurmTransport, name: str) -> tuple[list[NodeInfo], list[JobStatus]]:
        # The running jobs come from the queue snapshot (the monitor's tick, GET /api/jobs): only sinfo is new.
        nodes, queued = await asyncio.gather(transport.nodes(), self.queue(name))
        return nodes, [job for job in queued.value if job.state is JobState.RUNNING]

    def changed(self, transport: str) -> None:
        """The transport's queue changed through this process (a submit, a cancel): answers taken, and queries
        started, before now serve nobody after it, so a client sees its own change in the next list."""
        self._generations[transport] = self._generations.get(transport, 0) + 1
        for key in [key for key in self._latest if key[1] == transport and key[0] not in _KEPT_ACROSS_CHANGES]:
            del self._latest[key]

    async def limits(self, transport: str, *, max_age: float = LIMITS_MAX_AGE) -> Snapshot[SiteLimits | None]:
        """The job-count limits of the transport's user (``transports.site_limits``), kept ``max_age`` seconds: a
        change of the queue (``changed``) leaves them."""
        return await self._get(("limits", transport), lambda: read_site_limits(self.transport(transport)), max_age)

    async def identity(self, transport: str) -> Snapshot[ClusterIdentity | None]:
        """Which Slurm cluster the transport reaches (``scontrol show config``), kept :data:`IDENTITY_MAX_AGE`
        seconds; ``None`` for a transport that cannot run Slurm's tools."""
        return await self._get(("identity", transport), lambda: self._identity(transport), IDENTITY_MAX_AGE)

    async def _identity(self, name: str) -> ClusterIdentity | None:
        from svc_host.slurm.identity import parse_identity
        from svc_host.slurm.limits import config_argv

        transport = self.transport(name)
        if not isinstance(transport, SlurmTransport):
            return None
        return parse_identity(await transport.check(config_argv()))

    def kept(self, key: Hashable, make: Callable[[], W]) -> W:
        """What a reader keeps from one answer to the next (the encoded rows of a queue), made on first use."""
        if key not in self._kept:
            self._kept[key] = make()
        kept: W = self._kept[key]
        return kept

    def clear(self) -> None:
        """Forget every answer (the transports were rebuilt: a name may now reach another cluster). A query
        running now still answers its callers but is not kept."""
        self._latest = {}
        self._flights = SingleFlight()
        self._kept = {}

    async def close(self) -> None:
        """Forget every answer and cancel the queries running now (the transports are closing)."""
        flights = self._flights
        self.clear()
        await flights.close()

    async def _get(self, key: Key, fetch: Callable[[], Awaitable[Any]], max_age: float | None) -> Snapshot[Any]:
        """``key`` is ``(query, transport, ...)``."""
        limit = self.max_age if max_age is None else max_age
        latest = self._latest.get(key)
        if latest is not None and latest.age <= limit:
            return latest
        kept = self._latest
        transport = str(key[1])
        generation = self._generations.get(transport, 0)

        async def refresh() -> Snapshot[Any]:
            snapshot = Snapshot(await fetch(), asyncio.get_running_loop().time())
            if self._generations.get(transport, 0) == generation:  # else it may predate a change: answer, not keep
                kept[key] = snapshot
            return snapshot

        return await self._flights.run((key, generation), refresh)
