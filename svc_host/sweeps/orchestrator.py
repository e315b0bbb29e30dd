"""The sweep orchestrator: keeps at most ``max_parallel`` cells of a sweep in flight, launching the next one as
soon as one ends, and moves the sweep through its states (``svc_host.sweeps.status``).

Driven by events, never by polling: the engine's run listener (every cell status change made in this process)
and the end of each launch wake a sweep's worker, which settles the sweep (``settle``) and fills the free slots
with the next pending cells in matrix order. Every step reads the store first, so a missed wake-up costs only
time; the lease timer (every 10 s) is the safety net for changes another process made.

Ownership follows the engine's (``svc_host.runtime.leases``): one orchestrator per svc process, made, started and
closed by its ``Host`` (``Host.sweep_orchestrator``), with the engine's owner name; a sweep's cells are
launched only by the orchestrator holding the sweep's lease. A clean shutdown releases its sweeps;
servers (REST, MCP) take over sweeps nobody drives at start and on every lease tick, at once when the owner
was a process on this machine that has exited. A cell is launched only from ``pending`` (a wave's cells are
claimed together, under the sweep's lock, by ``next_cells``; the ``pending -> syncing`` step is a compare-and-set),
and a cell in flight when its process died is
taken over by the engine like any run, its submissions made safe by their markers: after a restart no cell
is lost and none runs twice. Over SSH a driven sweep holds one pool of min(max_parallel, 8) sessions, through
which the engine submits its cells' jobs, closed when the sweep ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from svc_host.concurrency.coalescing import KeyedWorkers
from svc_host.domain.times import utc_now
from svc_host.errors import ConflictError, InvalidStateError, NotFoundError, SvcError
from svc_host.runtime.leases import LeaseKeeper
from svc_host.slurm.arrays import array_of, task_id
from svc_host.sweeps import steering
from svc_host.sweeps import store as repo
from svc_host.sweeps.array_launch import array_cells, launch_array
from svc_host.sweeps.cells import SweepRequest, prepare_sweep, sync_mounts
from svc_host.sweeps.settle import BUDGET_CANCEL_REASON, FAIL_FAST_REASON, announce, settle
from svc_host.sweeps.status import TERMINAL, over_budget, stops_launching
from svc_host.sweeps.store import SWEEP_LEASES
from svc_host.workflows.engine import RunChange, WorkflowEngine
from svc_host.workflows.prepare import with_login_dir

if TYPE_CHECKING:
    from svc_host.domain.submission import JobDefinition
    from svc_host.store.tables import SweepRunRecord, WorkflowRunRecord
    from svc_host.workflows.store import RunSnapshot

log = logging.getLogger(__name__)
POOL_LIMIT = 8
"""At most this many SSH sessions per sweep (the spec's min(max_parallel, 8))."""


@dataclass
class _Driven:
    """A sweep this process launches cells of: its pool (closed when it ends) and the launches under way."""

    resources: contextlib.AsyncExitStack
    launches: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    array_checked: bool = False
    """Whether this process has looked at launching the sweep as one job array (done once, before any cell)."""
    held: set[str] = field(default_factory=set)
    """Jobs this process has held while the sweep is paused (so each is held once)."""


class SweepOrchestrator:
    """Starts, drives, cancels and watches the sweeps of one ``Host`` on top of its workflow engine."""

    def __init__(
        self,
        engine: WorkflowEngine,
        *,
        adopt_orphans: bool = True,
        lease_seconds: float = 30.0,
        renew_seconds: float = 10.0,
        arrays: bool = True,
    ) -> None:
        self.engine = engine
        self.arrays = arrays
        """Submit a uniform sweep as one job array (``svc_host.sweeps.array_launch``); else one sbatch per cell."""
        self.host = engine.host
        self.owner = engine.owner
        self.lease = timedelta(seconds=lease_seconds)
        self.leases = LeaseKeeper(
            self.host.store,
            SWEEP_LEASES,
            self.owner,
            lease=self.lease,
            every=renew_seconds,
            adopt=adopt_orphans,
            on_held=self._held,
            on_taken=self._taken,
            label="sweep run",
        )
        self._driven: dict[int, _Driven] = {}
        self._passes: KeyedWorkers[int] = KeyedWorkers(self._step, label="sweep")
        self._changed: dict[int, asyncio.Event] = {}
        self._lease_task: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False

    async def start(self) -> None:
        """Listen to the engine, keep leases, and (servers) take over orphaned sweeps. Idempotent."""
        if self._started:
            return
        self._started = True
        self.engine.add_listener(self._on_run_change)
        self._lease_task = asyncio.create_task(self.leases.run(), name="svc-sweep-leases")

    async def close(self, *, grace: float = 30.0) -> None:
        """Launch no more cells, let the launches under way finish (at most ``grace`` seconds), close the pools
        and release the sweeps held (another process takes them over at once)."""
        if self._closed:
            return
        self._closed = True
        tasks = [*self._passes.close(), *([self._lease_task] if self._lease_task else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        launches = [task for sweep in self._driven.values() for task in sweep.launches.values()]
        if launches:
            await asyncio.wait(launches, timeout=grace)
            for task in launches:
                task.cancel()
            await asyncio.gather(*launches, return_exceptions=True)
        driven, self._driven = list(self._driven.values()), {}
        for sweep in driven:
            with contextlib.suppress(Exception):
                await sweep.resources.aclose()
        with contextlib.suppress(Exception):  # the store may be closed already
            await self.leases.release()

    # -- the interface ---------------------------------------------------------------------------------------

    async def submit(self, request: SweepRequest) -> SweepRunRecord:
        """Prepare every cell, sync the mounts once, write the sweep and its cells in one transaction, then
        start launching (in the background). Returns the sweep as written (``pending``).

        Raises what a run's ``prepare`` raises (``WorkflowError``...) and ``SyncError``; nothing is written then.
        """
        request = dataclasses.replace(request, run=await with_login_dir(self.host, request.run))
        prepared = await asyncio.to_thread(prepare_sweep, self.host, request)
        await sync_mounts(self.host, prepared.sweep.transport, prepared.sync_mounts)
        sweep = await self.host.store.run(
            repo.insert_sweep, prepared.sweep, prepared.cells, owner=self.owner, lease_until=utc_now() + self.lease
        )
        if sweep.id is None:
            raise LookupError("the sweep row got no id")
        await self._drive(sweep)
        return sweep

    async def get(self, sweep_id: int) -> SweepRunRecord:
        sweep = await self.host.store.run(repo.get_sweep, sweep_id)
        if sweep is None:
            raise NotFoundError(f"sweep run {sweep_id} not found")
        return sweep

    async def sweeps(self, limit: int = repo.MAX_LISTED) -> list[SweepRunRecord]:
        """Sweeps, newest first."""
        return await self.host.store.run(repo.list_sweeps, limit)

    async def cells(self, sweep_id: int) -> list[WorkflowRunRecord]:
        """The cells of a sweep (``NotFoundError`` for an unknown sweep), by status, started_at, id."""
        await self.get(sweep_id)
        return await self.host.store.run(repo.cells, sweep_id)

    async def cells_with_jobs(self, sweep_id: int) -> list[tuple[WorkflowRunRecord, dict[str, str]]]:
        """``cells``, each with its submitted jobs' current scheduler ids by job name."""
        found = await self.cells(sweep_id)
        jobs = await self.host.store.run(repo.cell_jobs, sweep_id)
        return [(cell, jobs.get(cell.id, {})) for cell in found]

    async def cancel(self, sweep_id: int) -> SweepRunRecord:
        """Cancel a sweep: ``draining`` (pending cells cancelled, running cells' jobs cancelled), then
        ``cancelled`` once every cell has ended. Returns the sweep as the request left it; a sweep cancelled
        before is returned as it is (the first ``cancel_requested_at`` kept). A sweep that ended without a
        cancel is ``InvalidStateError``."""
        outcome = await self.host.store.run(repo.request_cancel, sweep_id)
        sweep = outcome.sweep
        if sweep is None:
            raise NotFoundError(f"sweep run {sweep_id} not found")
        if outcome.left is None:
            if sweep.cancel_requested_at is None:
                raise InvalidStateError(f"sweep run {sweep_id} is already {sweep.status}; nothing to cancel")
            return sweep
        announce(self.host, sweep, outcome.left)
        done: list[str] = []
        if sweep.array_job_id is not None:  # the whole array in one scancel; retried cells' own jobs on their own
            queued = await self.host.store.run(repo.waiting_in_queue, sweep_id)
            await self.engine.driver.submitter.scancel(sweep.transport, [(sweep.name, sweep.array_job_id)])
            await self.engine.driver.submitter.never_started(sweep.transport, [job_id for _, job_id in queued])
            done = [task_id(sweep.array_job_id, index) for index in range(sweep.cell_count)]
        flying = await self.host.store.run(repo.cell_ids, sweep_id, repo.IN_FLIGHT)
        await asyncio.gather(*(self._cancel_cell(run_id, cancelled=done) for run_id in flying))
        await self._settle(sweep_id)  # ``cancelled`` now if nothing was running
        self.kick(sweep_id)
        return sweep

    async def pause(self, sweep_id: int) -> SweepRunRecord:
        """Pause a sweep: no cell is launched until it is resumed, and its launched cells' queued jobs are held
        (an array's pending tasks with one command); running jobs run on. Pausing a paused sweep changes nothing.
        ``NotFoundError``; ``ConflictError`` for a sweep that ended or is being cancelled."""
        sweep, changed = await self._steer(sweep_id, paused=True)
        await self._hold(sweep)
        return await self._steered(sweep_id, changed)

    async def resume(self, sweep_id: int) -> SweepRunRecord:
        """Resume a paused sweep: its held jobs are released and cells are launched again. Resuming a sweep that
        is not paused changes nothing. ``NotFoundError``; ``ConflictError`` for a sweep that ended or is being
        cancelled."""
        sweep, changed = await self._steer(sweep_id, paused=False)
        if changed:
            driven = self._driven.get(sweep_id)
            if driven is not None:
                driven.held.clear()
            queued = await self.host.store.run(steering.queued_jobs, sweep_id)
            await self._hold_jobs(sweep, queued, release=True)
            self.kick(sweep_id)
        return await self._steered(sweep_id, changed)

    async def _steer(self, sweep_id: int, *, paused: bool) -> tuple[SweepRunRecord, bool]:
        """The sweep after setting its pause, and whether this call changed it."""
        outcome = await self.host.store.run(steering.set_paused, sweep_id, paused)
        sweep = outcome.sweep
        if sweep is None:
            raise NotFoundError(f"sweep run {sweep_id} not found")
        verb = "pause" if paused else "resume"
        if sweep.status in TERMINAL:
            raise ConflictError(f"sweep run {sweep_id} is already {sweep.status}; nothing to {verb}")
        if sweep.cancel_requested_at is not None:
            raise ConflictError(f"sweep run {sweep_id} is being cancelled; nothing to {verb}")
        return sweep, outcome.changed

    async def _steered(self, sweep_id: int, changed: bool) -> SweepRunRecord:
        """The sweep once its jobs are held (released); a change is announced then, with the held count."""
        sweep = await self.get(sweep_id)
        if changed:
            announce(self.host, sweep, sweep.status)
            self._notify(sweep_id)
        return sweep

    async def _hold(self, sweep: SweepRunRecord) -> None:
        """Hold the queued jobs of a paused sweep this process has not held yet, then recount ``cells_held``."""
        if sweep.id is None:
            return
        driven = self._driven.get(sweep.id)
        already = driven.held if driven is not None else set()
        queued = [
            job_id for job_id in await self.host.store.run(steering.queued_jobs, sweep.id) if job_id not in already
        ]
        if not queued:
            return
        await self._hold_jobs(sweep, queued, release=False)
        already.update(queued)
        with contextlib.suppress(SvcError):  # states read after the hold: a job that started before it is not held
            await self.host.monitor.refresh(sweep.transport, max_age=0.0)
        await self.host.store.run(repo.recounted, sweep.id)
        self._notify(sweep.id)

    async def _hold_jobs(self, sweep: SweepRunRecord, job_ids: list[str], *, release: bool) -> None:
        """One ``scontrol uhold`` (``release``): an array's tasks by the array's id, any other job by its own."""
        array = sweep.array_job_id
        ids = [job_id for job_id in job_ids if array is None or array_of(job_id) != array]
        if array is not None and len(ids) < len(job_ids):
            ids.insert(0, array)
        if not ids:
            return
        try:
            await self.host.transport(sweep.transport).hold(ids, release=release)
        except SvcError as exc:  # a job that ended meanwhile; the others were held (released) all the same
            log.warning("sweep %s: %s of queued jobs: %s", sweep.id, "release" if release else "hold", exc)

    async def launched(self, sweep_id: int) -> None:
        """Wait until the first step of a sweep and the launches it started are done (``--detach``)."""
        worker = self._passes.worker(sweep_id)
        if worker is not None:
            await asyncio.wait([worker])
        driven = self._driven.get(sweep_id)
        if driven is not None and driven.launches:
            await asyncio.wait(list(driven.launches.values()))

    async def wait(
        self,
        sweep_id: int,
        on_update: Callable[[SweepRunRecord], Awaitable[None]] | None = None,
        *,
        timeout: float = float("inf"),
        heartbeat: float = 10.0,
    ) -> SweepRunRecord:
        """Return once the sweep is terminal (or ``timeout`` passed), calling ``on_update`` on each change and
        at least every ``heartbeat`` seconds (progress for patient clients; a re-read for sweeps another
        process drives)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        while True:
            changed = self._changed.setdefault(sweep_id, asyncio.Event())
            sweep = await self.get(sweep_id)
            if on_update is not None:
                await on_update(sweep)
            remaining = deadline - loop.time()
            if sweep.status in TERMINAL or remaining <= 0:
                return sweep
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(remaining, heartbeat))

    # -- driving ---------------------------------------------------------------------------------------------

    async def _drive(self, sweep: SweepRunRecord) -> None:
        """Start launching the cells of a sweep this process holds; over SSH, open its session pool."""
        if sweep.id is None or sweep.id in self._driven:
            return
        resources = contextlib.AsyncExitStack()
        try:
            transport = self.host.transport(sweep.transport)
            pooled = await resources.enter_async_context(transport.pooled(min(sweep.max_parallel, POOL_LIMIT)))
        except SvcError as exc:  # e.g. a profile deleted since: the cells' launches will say what is wrong
            log.warning("sweep %s: no session pool for transport %r: %s", sweep.id, sweep.transport, exc)
        else:
            if pooled is not transport:
                self.engine.route(sweep.id, pooled)
                resources.callback(self.engine.route, sweep.id, None)
        self._driven[sweep.id] = _Driven(resources)
        self.kick(sweep.id)

    def kick(self, sweep_id: int) -> None:
        """Step a sweep soon (coalesced: one step at a time per sweep, and one more if kicked meanwhile)."""
        if not self._closed:
            self._passes.kick(sweep_id)

    async def _step(self, sweep_id: int) -> None:
        driven = self._driven.get(sweep_id)
        sweep = await self._settle(sweep_id, set(driven.launches) if driven else ())
        if driven is None or sweep is None:
            return
        if sweep.status in TERMINAL or sweep.owner != self.owner:
            if not driven.launches:  # the pool stays until the last launch under way is done
                del self._driven[sweep_id]
                await driven.resources.aclose()
            return
        cancelled = sweep.cancel_requested_at is not None
        if sweep.array_job_id is not None and sweep.fail_fast and sweep.cells_failed and not cancelled:
            await self._stop_queued_tasks(sweep_id, sweep.transport)
        spent = over_budget(repo.counters(sweep), sweep.max_failures)
        if spent and not cancelled and sweep.cells_running:
            await self._cancel_launched(sweep)
        elif sweep.paused_at is not None and not cancelled:
            await self._hold(sweep)
        if stops_launching(
            repo.counters(sweep),
            fail_fast=sweep.fail_fast,
            cancel_requested=cancelled,
            max_failures=sweep.max_failures,
            paused=sweep.paused_at is not None,
        ):
            return
        if self.arrays and not driven.array_checked:
            driven.array_checked = True
            cells = await array_cells(self.engine, sweep)
            if cells is not None:
                task = asyncio.create_task(self._launch_array(sweep, cells, driven), name=f"svc-sweep-{sweep_id}-array")
                driven.launches.update((snap.run.id, task) for snap, _ in cells)
                return
        lease_until = utc_now() + self.engine.lease
        chosen = await self.host.store.run(
            repo.next_cells, sweep_id, set(driven.launches), owner=self.owner, lease_until=lease_until
        )
        for run_id in chosen:
            task = asyncio.create_task(self._launch(sweep_id, run_id, driven), name=f"svc-cell-{run_id[:8]}")
            driven.launches[run_id] = task

    async def _settle(self, sweep_id: int, launching: Collection[str] = ()) -> SweepRunRecord | None:
        sweep = await settle(self.host, sweep_id, launching=launching)
        self._notify(sweep_id)
        return sweep

    async def _launch(self, sweep_id: int, run_id: str, driven: _Driven) -> None:
        try:
            await self.engine.launch_claimed(run_id)
        except SvcError as exc:  # the engine marked the cell failed with the reason
            log.info("sweep %s: cell %s could not start: %s", sweep_id, run_id, exc)
        except Exception:
            log.exception("sweep %s: launching cell %s failed", sweep_id, run_id)
        finally:
            driven.launches.pop(run_id, None)
            self.kick(sweep_id)

    async def _launch_array(
        self, sweep: SweepRunRecord, cells: list[tuple[RunSnapshot, JobDefinition]], driven: _Driven
    ) -> None:
        try:
            array_job_id = await launch_array(self.engine, sweep, cells)
            log.info("sweep %s: %d cells submitted as job array %s", sweep.id, len(cells), array_job_id)
        except SvcError as exc:  # every cell was marked failed with the reason
            log.info("sweep %s: the job array could not be submitted: %s", sweep.id, exc)
        except Exception:
            log.exception("sweep %s: launching the job array failed", sweep.id)
        finally:
            for snap, _ in cells:
                driven.launches.pop(snap.run.id, None)
            if sweep.id is not None:
                self.kick(sweep.id)

    async def _stop_queued_tasks(self, sweep_id: int, transport: str) -> None:
        """fail_fast in an array: cancel the cells whose task has not started (one scancel for all of them)."""
        if not await self.host.store.run(repo.waiting_in_queue, sweep_id):
            return
        with contextlib.suppress(SvcError):  # states fresh, so a task that just started runs to its end
            await self.host.monitor.refresh(transport)
        queued = await self.host.store.run(repo.waiting_in_queue, sweep_id)
        if not queued:
            return
        tasks = [job_id for _, job_id in queued]
        for warning in await self.engine.driver.submitter.scancel(
            transport, [("array task", job_id) for job_id in tasks]
        ):
            log.warning("sweep %s: %s", sweep_id, warning)
        await self.engine.driver.submitter.never_started(transport, tasks)
        for run_id, _ in queued:
            await self._cancel_cell(run_id, error=FAIL_FAST_REASON, cancelled=tasks)

    async def _cancel_launched(self, sweep: SweepRunRecord) -> None:
        """The failure budget is spent: cancel the launched cells (an array's tasks with one scancel)."""
        if sweep.id is None:
            return
        done: list[str] = []
        if sweep.array_job_id is not None:
            queued = await self.host.store.run(repo.waiting_in_queue, sweep.id)
            for warning in await self.engine.driver.submitter.scancel(
                sweep.transport, [(sweep.name, sweep.array_job_id)]
            ):
                log.warning("sweep %s: %s", sweep.id, warning)
            await self.engine.driver.submitter.never_started(sweep.transport, [job_id for _, job_id in queued])
            done = [task_id(sweep.array_job_id, index) for index in range(sweep.cell_count)]
        flying = await self.host.store.run(repo.cell_ids, sweep.id, repo.IN_FLIGHT)
        cancels = (self._cancel_cell(run_id, error=BUDGET_CANCEL_REASON, cancelled=done) for run_id in flying)
        await asyncio.gather(*cancels)

    async def _cancel_cell(self, run_id: str, *, error: str | None = None, cancelled: Collection[str] = ()) -> None:
        try:
            for warning in await self.engine.cancel(run_id, error=error, cancelled=cancelled):
                log.warning("cell %s: %s", run_id, warning)
        except InvalidStateError:
            pass  # it ended meanwhile

    async def _on_run_change(self, change: RunChange) -> None:
        if change.sweep_id is not None:
            self.kick(change.sweep_id)

    def _notify(self, sweep_id: int) -> None:
        changed = self._changed.pop(sweep_id, None)
        if changed is not None:
            changed.set()

    # -- ownership -------------------------------------------------------------------------------------------

    def _held(self, sweep_ids: list[int]) -> None:
        for sweep_id in set(sweep_ids) | set(self._driven):
            self.kick(sweep_id)  # the safety net for changes another process made

    async def _taken(self, sweep_id: int) -> None:
        await self._drive(await self.get(sweep_id))
