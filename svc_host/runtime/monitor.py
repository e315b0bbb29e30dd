"""The one status loop: per transport, one batched scheduler query per tick for every tracked job.

The monitor reads the live jobs of a transport from the store, reads all of them from one refresh of the
transport's queue snapshot (the squeue that ``GET /api/jobs`` serves, see :mod:`svc_host.runtime.snapshots`),
asks the transport once for the jobs that left the queue (their final state from accounting), writes
transitions and emits ``job.status_changed``.
The interval adapts: quick right after a submit or a change, doubling up to ``max_interval`` while nothing
changes, but at most ``watched_interval`` while someone waits for the next change (``watch``: an agent's
``wait_for_change``), so a waiter hears of a job's end within about a second, from the same one batched query.
A loop ends when its transport has no live job left and starts again on the next ``poke``.

A job the scheduler forgot (in neither squeue nor accounting, e.g. slurmctld lost its state, or an id that
never existed) would otherwise stay live forever, keeping its workflow run and sweep slot open and growing
every ``--jobs=`` list. Once it has been missing from every answer for ``lost_after`` seconds (10 minutes by
default, counted by this process) it ends ``FAILED`` with raw state ``LOST``: its outcome cannot be known, and
a workflow job with retries left is submitted again. An accounting outage longer than that would also end
finished jobs ``LOST``; Slurm's ``MinJobAge`` (5 minutes by default) is when they leave squeue.

A caller that needs one tracked job's state now (MCP ``get_job_status``) gets its scheduler line from
``sighting`` (the queue's snapshot while fresh, else ``squeue`` of that job alone) and the monitor stores it
after the answer (``record``). Ticks and sightings write through one path per transport that keeps, per job,
the newest observation only: a line seen before the one already stored is dropped, so each transition is
recorded once and never undone by a late writer.

Each tick also reads, in one sacct, the usage of the jobs that ended within ``usage_window`` seconds and have
none stored yet (what efficiency is computed from): usually the tick that saw them end, or the next ones while
accounting catches up. The loop keeps ticking while such jobs remain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.errors import SvcError
from svc_host.plugin_core.records import Event
from svc_host.runtime.transport_registry import TransportRegistry
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store

log = logging.getLogger(__name__)

USAGE_TRIES = 3
"""Ticks on which an ended job's usage is asked for before svc gives up on it."""


class Monitor:
    """Refreshes every tracked job of every transport; REST, MCP and the CLI read what it stores."""

    def __init__(
        self,
        store: Store,
        transports: TransportRegistry,
        emit: Callable[[Event], None],
        *,
        min_interval: float = 1.0,
        max_interval: float = 10.0,
        watched_interval: float = 1.0,
        lost_after: float = 600.0,
        usage_window: float = 600.0,
    ) -> None:
        self.store = store
        self.transports = transports
        self.emit = emit
        self.min_interval = min_interval
        self.max_interval = max_interval
        self.watched_interval = watched_interval
        self.lost_after = lost_after
        self.usage_window = usage_window
        self._missing_since: dict[tuple[str, str], float] = {}
        self._usage_tries: dict[str, dict[str, int]] = {}
        self._loops: dict[str, asyncio.Task[None]] = {}
        self._refreshing: dict[str, asyncio.Task[list[job_repo.StateChange]]] = {}
        self._last_tick: dict[str, float] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._sleeping: dict[str, float] = {}
        self._watchers: dict[str, int] = {}
        self.ticks: dict[str, int] = {}
        self._listeners: list[Callable[[list[job_repo.StateChange]], Awaitable[None]]] = []
        self._writing: dict[str, asyncio.Lock] = {}
        self._observed: dict[str, dict[str, float]] = {}
        self._recording: set[asyncio.Task[None]] = set()

    def add_listener(self, listener: Callable[[list[job_repo.StateChange]], Awaitable[None]]) -> None:
        """Call ``listener`` with the transitions of every tick that recorded some (e.g. the workflow engine)."""
        self._listeners.append(listener)

    async def start(self) -> None:
        """Pick up every job left live in the store (e.g. after a restart)."""
        for transport in await self.store.run(job_repo.live_transports):
            self.poke(transport)

    def poke(self, transport: str) -> None:
        """Something changed on ``transport`` (a submit, a cancel): refresh soon and reset the backoff."""
        self._wake.setdefault(transport, asyncio.Event()).set()
        loop = self._loops.get(transport)
        if loop is None or loop.done():
            self._loops[transport] = asyncio.create_task(self._run(transport), name=f"svc-monitor-{transport}")

    @contextlib.contextmanager
    def watch(self, transport: str) -> Iterator[None]:
        """Someone waits for the next change on ``transport``: tick at least every ``watched_interval`` seconds
        until they stop (one shared loop however many wait)."""
        self._watchers[transport] = self._watchers.get(transport, 0) + 1
        loop = self._loops.get(transport)
        if loop is None or loop.done() or self._sleeping.get(transport, 0.0) > self.watched_interval:
            self.poke(transport)  # no loop, or one asleep for longer: tick now, then keep the pace
        try:
            yield
        finally:
            self._watchers[transport] -= 1
            if not self._watchers[transport]:
                del self._watchers[transport]

    async def refresh(self, transport: str, *, max_age: float = 1.0) -> list[job_repo.StateChange]:
        """Make the stored states of ``transport`` at most ``max_age`` seconds old; returns the transitions
        the refresh recorded (none when the store was fresh enough).

        Concurrent callers share one tick, so a burst of status requests costs one scheduler query.
        """
        loop = asyncio.get_running_loop()
        if loop.time() - self._last_tick.get(transport, -max_age - 1) <= max_age:
            return []
        running = self._refreshing.get(transport)
        if running is None or running.done():
            running = asyncio.ensure_future(self.tick(transport))
            self._refreshing[transport] = running
        return await asyncio.shield(running)

    def seen_live(self, transport: str, job_id: str) -> bool:
        """Whether this monitor's last tick or a sighting stored ``job_id`` while it was in the queue: a hint, read
        from memory, that asking for its line now is not wasted (it may have ended since: one query too many)."""
        return job_id in self._observed.get(transport, {})

    async def sighting(self, transport: str, job_id: str) -> tuple[JobStatus, float] | None:
        """The scheduler's line of a job while it is in the queue, not ended, at most about a second old, and when
        it was read (the event loop's clock): from the queue's snapshot while fresh, else one ``squeue`` of this
        job alone (kept as long, and shared with identical ones running now). ``None`` when the job is not live
        there (ended, or not listed) or the scheduler could not be asked: ask ``refresh`` then. Only reads: a
        caller that tracks the job hands the line to ``record``."""
        snapshots = self.transports.snapshots
        whole = snapshots.fresh(("queue", transport))
        try:
            if whole is not None:
                seen, observed_at = next((job for job in whole.value if job.job_id == job_id), None), whole.taken_at
            else:
                one = await snapshots.job(transport, job_id)
                seen, observed_at = one.value, one.taken_at
        except SvcError as exc:
            log.info("a sighting of job %s on %s failed (%s); the full refresh will report it", job_id, transport, exc)
            return None
        return None if seen is None or seen.state.is_terminal else (seen, observed_at)

    def record(self, transport: str, job_id: str, seen: JobStatus, observed_at: float) -> None:
        """Store a tracked job's line seen at ``observed_at`` (the event loop's clock) without holding up the
        caller: transitions, listeners and events as a tick's. ``stop`` waits for what is being stored."""
        task = asyncio.create_task(self._store_sighting(transport, job_id, seen, observed_at))
        self._recording.add(task)
        task.add_done_callback(self._recording.discard)

    async def _store_sighting(self, transport: str, job_id: str, seen: JobStatus, observed_at: float) -> None:
        try:
            await self._announce(transport, await self._write(transport, {job_id: seen}, {job_id: observed_at}))
        except Exception:  # the next tick stores it anyway
            log.exception("storing a sighting of job %s on %s failed", job_id, transport)

    async def _write(
        self, transport: str, statuses: dict[str, JobStatus], observed_at: dict[str, float]
    ) -> list[job_repo.StateChange]:
        """Apply each status, observed at ``observed_at[job_id]`` (the event loop's clock), unless a later
        observation of its job was written already."""
        async with self._writing.setdefault(transport, asyncio.Lock()):
            written = self._observed.setdefault(transport, {})
            newer = {
                job_id: status
                for job_id, status in statuses.items()
                if written.get(job_id, observed_at[job_id]) <= observed_at[job_id]
            }
            if not newer:
                return []
            written.update((job_id, observed_at[job_id]) for job_id in newer)
            return await self.store.run(job_repo.apply_statuses, transport, newer)

    async def tick(self, transport: str) -> list[job_repo.StateChange]:
        """One refresh of every live job of ``transport``: one batched query, transitions, events."""
        live = await self.store.run(job_repo.live_job_ids, transport)
        observed = self._observed.setdefault(transport, {})
        for job_id in set(observed) - set(live):
            del observed[job_id]
        changes = []
        if live:
            statuses, observed_at = await self._statuses(transport, live)
            lost = self._lost(transport, live, statuses)
            statuses.update(lost)
            observed_at.update(dict.fromkeys(lost, asyncio.get_running_loop().time()))
            changes = await self._write(transport, statuses, observed_at)
        await self._collect_usage(transport)
        if not live:
            return []
        self.ticks[transport] = self.ticks.get(transport, 0) + 1
        self._last_tick[transport] = asyncio.get_running_loop().time()
        await self._announce(transport, changes)
        return changes

    async def _announce(self, transport: str, changes: list[job_repo.StateChange]) -> None:
        """Listeners, then one ``job.status_changed`` event per transition."""
        for listener in self._listeners if changes else ():
            try:
                await listener(changes)
            except Exception:  # a listener's bug must not stop status refreshes
                log.exception("monitor listener failed on %s", transport)
        for change in changes:
            self.emit(
                Event(
                    name="job.status_changed",
                    payload={
                        "transport": change.transport,
                        "job_id": change.job_id,
                        "name": change.name,
                        "from": change.from_state,
                        "to": change.to_state,
                        "raw_state": change.raw_state,
                        "exit_code": change.exit_code,
                    },
                )
            )

    async def _statuses(self, transport: str, live: list[str]) -> tuple[dict[str, JobStatus], dict[str, float]]:
        """The live jobs' states from the transport's queue snapshot, refreshed by this tick (or shared with a
        list request running now), so list endpoints read what the tick asked; only jobs that left the queue
        cost a query of their own (their final state from accounting). Also when each was observed."""
        queued = await self.transports.snapshots.queue(transport, max_age=0)
        wanted = set(live)
        found = {job.job_id: job for job in queued.value if job.job_id in wanted and not job.state.is_terminal}
        observed_at = dict.fromkeys(found, queued.taken_at)
        left = [job_id for job_id in live if job_id not in found]
        if left:
            settled = await self.transports.get(transport).statuses(left)
            found.update(settled)
            observed_at.update(dict.fromkeys(settled, asyncio.get_running_loop().time()))
        return found, observed_at

    async def _collect_usage(self, transport: str) -> None:
        """Store the usage of the jobs that ended lately without one, in one query; each job is asked about on
        at most :data:`USAGE_TRIES` ticks (accounting may lag the end by a moment, or not exist at all)."""
        since = datetime.now(UTC) - timedelta(seconds=self.usage_window)
        ended = await self.store.run(job_repo.awaiting_usage, transport, ended_since=since)
        tries = self._usage_tries.setdefault(transport, {})
        for job_id in set(tries) - set(ended):
            del tries[job_id]
        asking = [job_id for job_id in ended if tries.get(job_id, 0) < USAGE_TRIES]
        if not asking:
            return
        for job_id in asking:
            tries[job_id] = tries.get(job_id, 0) + 1
        try:
            usages = await self.transports.get(transport).usage(asking)
        except SvcError as exc:  # efficiency is a bonus: never let it fail a status refresh
            log.warning("reading job usage on %s failed: %s", transport, exc)
            return
        await self.store.run(job_repo.record_usages, transport, usages)

    def _usage_due(self, transport: str) -> bool:
        """Some ended job of ``transport`` will be asked about again on the next tick."""
        return any(count < USAGE_TRIES for count in self._usage_tries.get(transport, {}).values())

    def _lost(self, transport: str, live: list[str], found: dict[str, JobStatus]) -> dict[str, JobStatus]:
        """``FAILED``/``LOST`` for the live jobs missing from every answer for ``lost_after`` seconds."""
        now = asyncio.get_running_loop().time()
        tracked = set(live)
        for key in [key for key in self._missing_since if key[0] == transport and key[1] not in tracked]:
            del self._missing_since[key]  # it left the live set some other way (a cancel, another process)
        lost: dict[str, JobStatus] = {}
        for job_id in live:
            key = (transport, job_id)
            if job_id in found:
                self._missing_since.pop(key, None)
                continue
            missing = now - self._missing_since.setdefault(key, now)
            if missing >= self.lost_after:
                del self._missing_since[key]
                raw = f"LOST (in neither squeue nor accounting for {missing:.0f} s)"
                lost[job_id] = JobStatus(job_id=job_id, state=JobState.FAILED, raw_state=raw)
        return lost

    async def _run(self, transport: str) -> None:
        wake = self._wake.setdefault(transport, asyncio.Event())
        interval = self.min_interval
        while True:
            wake.clear()
            try:
                changes = await self.tick(transport)
            except SvcError as exc:  # a scheduler hiccup is retried on the next tick, never fatal
                log.warning("monitor tick on %s failed: %s", transport, exc)
                changes = []
            except Exception:
                log.exception("monitor tick on %s crashed", transport)
                changes = []
            if not await self.store.run(job_repo.live_job_ids, transport) and not self._usage_due(transport):
                return
            interval = self.min_interval if changes else min(interval * 2, self.max_interval)
            if transport in self._watchers:
                interval = min(interval, self.watched_interval)
            self._sleeping[transport] = interval
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout=interval)
            finally:
                del self._sleeping[transport]
            if wake.is_set():
                interval = self.min_interval

    async def stop(self) -> None:
        """Stop polling; refreshes that callers wait for go on (the svc agent stops after each request)."""
        await asyncio.gather(*self._recording, return_exceptions=True)
        loops, self._loops = list(self._loops.values()), {}
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)

    async def close(self) -> None:
        """``stop``, and cancel the refreshes still running: the host is closing, nobody waits for them."""
        await self.stop()
        refreshes, self._refreshing = list(self._refreshing.values()), {}
        for task in refreshes:
            task.cancel()
        await asyncio.gather(*refreshes, return_exceptions=True)
