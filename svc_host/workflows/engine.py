"""The one workflow engine: REST, MCP, the CLI and sweeps all run workflows through it.

A run: ``syncing`` (the referenced mounts are synced, each mount's sync lock held on through the first
submissions) -> ``submitting`` (every job rendered once, so a template problem fails the run before
anything is submitted; then the ready jobs are submitted in topological order with ``--dependency``)
-> ``running`` -> ``completed`` | ``failed``; ``cancelled`` from any non-terminal state. The decisions are
the pure :func:`svc_host.workflows.plan.plan`; this module carries them out.

The engine never polls the scheduler. It reacts to the monitor's transitions (``Monitor.add_listener``)
and to its own timers (retry delays, persisted as ``next_retry_at``). Every step reads the store first,
so a missed notification costs nothing but time: each owned run is also re-planned on the lease timer.

Ownership: every svc process has one engine, and a run is driven by one engine at a time, the one
holding its lease (``owner``/``lease_until``, renewed every ``renew_seconds``). A clean shutdown releases
its runs; a crashed process's runs are taken over by another engine once the lease has run out (at once
when the owner was a process on this machine that no longer exists; see ``svc_host.runtime.leases``). Servers
(REST, MCP) adopt every orphaned run; the CLI drives only the run it started. The ``Host`` makes, starts and
closes the engine of its process (``Host.workflow_engine``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from svc_host.concurrency.coalescing import KeyedWorkers
from svc_host.domain.times import utc_now
from svc_host.errors import InvalidStateError, NotFoundError, SvcError
from svc_host.plugin_core.records import Event
from svc_host.runtime.leases import LeaseKeeper, new_owner
from svc_host.workflows import store as repo
from svc_host.workflows.plan import RUN_CANCELLED, RUN_SYNCING, RUN_TERMINAL
from svc_host.workflows.prepare import PreparedRun, RunRequest, prepare, with_login_dir
from svc_host.workflows.runner import RunDriver
from svc_host.workflows.store import RUN_LEASES

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports
    from svc_host.store.jobs import StateChange
    from svc_host.store.tables import WorkflowRunRecord
    from svc_host.transports.base import Transport
    from svc_host.workflows.store import Attempt, RunSnapshot

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunChange:
    """A run changed status (what ``add_listener`` callbacks receive)."""

    run_id: str
    workflow_name: str
    from_status: str
    to_status: str
    error: str | None
    sweep_id: int | None


RunListener = Callable[[RunChange], Awaitable[None]]


class WorkflowEngine:
    """Creates, launches, advances, cancels and watches workflow runs of one ``Host``."""

    def __init__(
        self,
        host: Ports,
        *,
        owner: str | None = None,
        adopt_orphans: bool = True,
        lease_seconds: float = 30.0,
        renew_seconds: float = 10.0,
    ) -> None:
        self.host = host
        self.lease = timedelta(seconds=lease_seconds)
        self.owner = owner or new_owner()
        self.leases = LeaseKeeper(
            host.store,
            RUN_LEASES,
            self.owner,
            lease=self.lease,
            every=renew_seconds,
            adopt=adopt_orphans,
            on_held=self._held,
            on_taken=self._taken,
            label="workflow run",
        )
        self.driver = RunDriver(host, self.owner, self.announce, self._notify, self._schedule)
        self._owned: set[str] = set()
        self._passes: KeyedWorkers[str] = KeyedWorkers(self.driver.advance, label="workflow run")
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._events: dict[str, asyncio.Event] = {}
        self._listeners: list[RunListener] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._lease_task: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen to the monitor, keep leases, and (servers) take over orphaned runs. Idempotent."""
        if self._started:
            return
        self._started = True
        self.host.monitor.add_listener(self._on_job_changes)
        self._lease_task = asyncio.create_task(self.leases.run(), name="svc-workflow-leases")

    async def close(self) -> None:
        """Stop timers and tasks and release the runs this engine holds (another engine takes them at once)."""
        if self._closed:
            return
        self._closed = True
        for timer in self._timers.values():
            timer.cancel()
        tasks = [*self._tasks, *self._passes.close(), *([self._lease_task] if self._lease_task else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):  # the store may be closed already
            await self.leases.release()

    def route(self, sweep_id: int, transport: Transport | None) -> None:
        """Submit the jobs of ``sweep_id``'s cells through ``transport`` (the sweep's pooled sessions), or
        through the run's own transport again (``None``)."""
        if transport is None:
            self.driver.submitter.routes.pop(sweep_id, None)
        else:
            self.driver.submitter.routes[sweep_id] = transport

    def hold(self, run_ids: Collection[str]) -> None:
        """Drive runs this engine's owner was written on in the store (a sweep's cells launched together)."""
        self._owned.update(run_ids)

    def add_listener(self, listener: RunListener) -> None:
        """Call ``listener`` on every run status change this engine makes (sweeps count cells with it)."""
        self._listeners.append(listener)

    # -- running ---------------------------------------------------------------------------------------------

    async def prepare(self, request: RunRequest) -> PreparedRun:
        """Load, validate and place a run without touching the store or the cluster (a dry run stops here)."""
        request = await with_login_dir(self.host, request)
        return await asyncio.to_thread(prepare, self.host, request)

    async def create(
        self, prepared: PreparedRun, *, triggered_by: str, status: str = RUN_SYNCING, sweep_id: int | None = None
    ) -> str:
        """Write the run and its jobs (held by this engine); returns the run id. ``launch`` runs it."""
        run_id = str(uuid.uuid4())
        await self.host.store.run(
            repo.insert_run,
            prepared.new_run,
            run_id=run_id,
            status=status,
            triggered_by=triggered_by,
            sweep_id=sweep_id,
            owner=self.owner,
            lease_until=utc_now() + self.lease,
        )
        self._owned.add(run_id)
        return run_id

    async def launch(self, run_id: str) -> RunSnapshot:
        """Sync, render and submit a created run; ``running`` when it returns.

        Raises (after marking the run ``failed``, cancelling whatever was submitted):
            SyncError (or the sync backend's error): a mount could not be synced.
            RenderError: a job's script could not be rendered (nothing was submitted).
            TransportError: a submission failed.
        """
        await self._claim(run_id)
        await self.driver.launch(run_id)
        return await self.get(run_id)

    async def launch_claimed(self, run_id: str) -> None:
        """``launch`` a run whose lease the caller wrote for this engine's owner (a sweep's cells, claimed
        together by ``svc_host.sweeps.store.next_cells``), without reading the run back. Raises as ``launch``."""
        self._owned.add(run_id)
        await self.driver.launch(run_id)

    async def run(self, request: RunRequest, *, triggered_by: str) -> RunSnapshot:
        """``prepare`` + ``create`` + ``launch``."""
        prepared = await self.prepare(request)
        return await self.launch(await self.create(prepared, triggered_by=triggered_by))

    async def cancel(self, run_id: str, *, error: str | None = None, cancelled: Collection[str] = ()) -> list[str]:
        """Cancel a run and every job it submitted but those in ``cancelled`` (job ids cancelled already, e.g.
        with their array); returns ``<job name>: <message>`` for jobs that could not be cancelled.
        ``InvalidStateError`` for a terminal run, ``NotFoundError`` for an unknown one."""
        snap = await self.get(run_id)
        if snap.terminal or await self._set_status(run_id, RUN_CANCELLED, error) is None:
            now = await self.get(run_id)
            raise InvalidStateError(f"workflow run {run_id} is already {now.run.status}; nothing to cancel")
        self._cancel_timer(run_id)
        return await self.driver.cancel_jobs(run_id, cancelled=cancelled)

    async def get(self, run_id: str, *, refresh: bool = False) -> RunSnapshot:
        """A run as stored; ``refresh`` first brings the states of its live jobs up to date (one batched query)."""
        snap = await self.host.store.run(repo.snapshot, run_id)
        if snap is None:
            raise NotFoundError(f"workflow run {run_id!r} not found")
        if refresh and any(snap.job_status(job) in repo.LIVE_STATUSES for job in snap.jobs if job.job_id):
            with contextlib.suppress(SvcError):
                await self.host.monitor.refresh(snap.run.transport)
                snap = await self.host.store.run(repo.snapshot, run_id) or snap
        return snap

    async def attempts(self, run_id: str) -> list[Attempt]:
        """Every attempt of the run's jobs (see ``store.attempts``)."""
        return await self.host.store.run(repo.attempts, run_id)

    async def runs(self, **filters: object) -> list[RunSnapshot]:
        """Runs, newest first (``limit``, ``offset``, ``status``, ``workflow_name``, ``sweep_id``)."""
        return await self.host.store.run(repo.snapshots, **filters)  # type: ignore[arg-type]

    async def wait(
        self,
        run_id: str,
        timeout: float,
        on_update: Callable[[RunSnapshot], Awaitable[None]] | None = None,
    ) -> RunSnapshot:
        """Return once the run is terminal or ``timeout`` seconds passed, calling ``on_update`` on each change.

        Woken by this engine's changes; re-reads the store every 5 s for runs another process drives.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        while True:
            event = self._events.setdefault(run_id, asyncio.Event())
            snap = await self.get(run_id)
            if on_update is not None:
                await on_update(snap)
            remaining = deadline - loop.time()
            if snap.terminal or remaining <= 0:
                return snap
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), min(remaining, 5.0))

    # -- reacting --------------------------------------------------------------------------------------------

    def kick(self, run_id: str) -> None:
        """Re-plan a run soon (coalesced: one pass at a time per run, and one more if kicked meanwhile)."""
        if not self._closed:
            self._passes.kick(run_id)

    async def _on_job_changes(self, changes: list[StateChange]) -> None:
        by_transport: dict[str, list[str]] = {}
        for change in changes:
            by_transport.setdefault(change.transport, []).append(change.job_id)
        for transport, job_ids in by_transport.items():
            for run_id in await self.host.store.run(repo.runs_for_jobs, transport, job_ids):
                if run_id in self._owned:
                    self.kick(run_id)

    def _schedule(self, run_id: str, delay: float) -> None:
        self._cancel_timer(run_id)
        self._timers[run_id] = asyncio.get_running_loop().call_later(max(0.0, delay), self.kick, run_id)

    def _cancel_timer(self, run_id: str) -> None:
        timer = self._timers.pop(run_id, None)
        if timer is not None:
            timer.cancel()

    def _notify(self, run_id: str) -> None:
        event = self._events.pop(run_id, None)
        if event is not None:
            event.set()

    async def _set_status(self, run_id: str, status: str, error: str | None = None) -> str | None:
        moved = await self.host.store.run(repo.move_run, run_id, status, error=error)
        if moved is None:
            return None
        await self.announce(moved.run, moved.before, moved.after)
        return moved.before

    async def announce(self, run: WorkflowRunRecord, before: str, after: str) -> None:
        """Tell about a run status change made in the store (an event, the listeners, waiters); for changes
        made outside the engine's own steps, such as a sweep's cells moved together."""
        run_id = run.id
        if after in RUN_TERMINAL:
            self._cancel_timer(run_id)
            self.driver.forget(run_id)
        change = RunChange(run_id, run.workflow_name, before, after, run.error, run.sweep_id)
        self.host.emit(
            Event(
                name="workflow_run.status_changed",
                payload={
                    "id": run_id,
                    "workflow_name": run.workflow_name,
                    "from": before,
                    "to": after,
                    "error": run.error,
                    "sweep_id": run.sweep_id,
                    "triggered_by": run.triggered_by,
                },
            )
        )
        for listener in self._listeners:
            try:
                await listener(change)
            except Exception:  # one listener's bug must not stop the run
                log.exception("workflow run listener failed on %s", run_id)
        self._notify(run_id)

    # -- ownership -------------------------------------------------------------------------------------------

    async def _claim(self, run_id: str) -> None:
        if not await self.leases.claim(run_id):
            snap = await self.get(run_id)
            if snap.terminal:
                raise InvalidStateError(f"workflow run {run_id} is already {snap.run.status}")
            raise InvalidStateError(f"workflow run {run_id} is driven by another svc process ({snap.run.owner})")
        self._owned.add(run_id)

    def _held(self, run_ids: list[str]) -> None:
        self._owned = set(run_ids)
        for run_id in run_ids:
            self.kick(run_id)  # the safety net for transitions another process recorded

    async def _taken(self, run_id: str) -> None:
        self._owned.add(run_id)
        self._spawn(self.driver.resume(run_id))

    def _spawn(self, work: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("workflow engine task failed")

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
