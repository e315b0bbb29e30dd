"""Carrying out one run's steps: launch (sync, render, first submissions), advance (a plan applied), cancel.

One ``asyncio.Lock`` per run serialises the steps of a run inside a process; the compare-and-set updates
of ``store`` guard against other processes. See ``engine`` for the run life cycle, ``plan`` for the
decisions and ``submission`` for how a submission survives a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING

from svc_host.domain.jobs import JobState
from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import utc_now
from svc_host.errors import ConfigError, RenderError, SvcError, SyncError, TransportError
from svc_host.plugin_core.settings import render_job
from svc_host.settings.mounts import find_mount, mount_profile
from svc_host.slurm.arrays import array_of
from svc_host.workflows import job_rows, run_status
from svc_host.workflows import store as repo
from svc_host.workflows.plan import (
    CANCELLED,
    RUN_FAILED,
    RUN_PENDING,
    RUN_RUNNING,
    RUN_SUBMITTING,
    RUN_SYNCING,
    SUBMITTING,
    Plan,
    plan,
)
from svc_host.workflows.submission import RunCancelled, Submitter, dependency_flag

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports
    from svc_host.store.tables import WorkflowRunRecord
    from svc_host.workflows.store import RunSnapshot

log = logging.getLogger(__name__)
MAX_PASSES = 5


class RunDriver:
    """The steps of runs, for the engine (``status_changed``, ``notify`` and ``schedule`` are its hooks)."""

    def __init__(
        self,
        host: Ports,
        owner: str,
        status_changed: Callable[[WorkflowRunRecord, str, str], Awaitable[None]],
        notify: Callable[[str], None],
        schedule: Callable[[str, float], None],
    ) -> None:
        self.host = host
        self.owner = owner
        self.status_changed = status_changed
        self.notify = notify
        self.schedule = schedule
        self._locks: dict[str, asyncio.Lock] = {}
        self._finished: set[str] = set()
        self.submitter = Submitter(host, wake=lambda run_id: schedule(run_id, 0.0))

    def _lock(self, run_id: str) -> asyncio.Lock:
        return self._locks.setdefault(run_id, asyncio.Lock())

    def forget(self, run_id: str) -> None:
        """A run ended: drop its lock now, or once the step holding it is done."""
        self._finished.add(run_id)
        self._drop_finished(run_id)

    def _drop_finished(self, run_id: str) -> None:
        lock = self._locks.get(run_id)
        if run_id in self._finished and (lock is None or not lock.locked()):
            self._locks.pop(run_id, None)
            self._finished.discard(run_id)

    async def _snapshot(self, run_id: str) -> RunSnapshot | None:
        return await self.host.store.run(repo.snapshot, run_id)

    async def _move(
        self, run_id: str, status: str, *, error: str | None = None, only_from: list[str] | None = None
    ) -> bool:
        moved = await self.host.store.run(run_status.move_run, run_id, status, error=error, only_from=only_from)
        if moved is not None:
            await self.status_changed(moved.run, moved.before, moved.after)
        return moved is not None

    async def _move_along(self, run_id: str, path: list[tuple[str, list[str]]]) -> WorkflowRunRecord | None:
        """Status changes made back to back, in one transaction; the run as the last one left it, if it was made."""
        moves = await self.host.store.run(run_status.move_run_along, run_id, path)
        for moved in moves:
            await self.status_changed(moved.run, moved.before, moved.after)
        return moves[-1].run if moves and moves[-1].after == path[-1][0] else None

    async def _fail(self, run_id: str, message: str) -> None:
        await self.host.store.run(job_rows.cancel_unsubmitted, run_id, CANCELLED)
        await self._move(run_id, RUN_FAILED, error=message)

    # -- launch ----------------------------------------------------------------------------------------------

    async def launch(self, run_id: str) -> None:
        """``pending``/``syncing`` -> sync -> ``submitting`` -> render all -> submit the ready jobs -> ``running``.

        Whatever stops a launch (an ``SvcError`` or a bug), the run ends ``failed`` with the reason before the
        error propagates: never left ``syncing``/``submitting``.
        """
        try:
            async with self._lock(run_id):
                try:
                    await self._launch(run_id)
                except Exception as exc:
                    try:
                        await self._abandon_launch(run_id, exc)
                    except Exception:
                        log.exception("run %s: could not mark the failed launch", run_id)
                    raise
        finally:
            self._drop_finished(run_id)

    async def _abandon_launch(self, run_id: str, exc: Exception) -> None:
        """Fail a launch that stopped before it was done, leaving no job of it live or unknown (a job whose
        sbatch was cut short is looked up by its marker first, then cancelled)."""
        snap = await self._snapshot(run_id)
        if snap is None or snap.run.status not in (RUN_PENDING, RUN_SYNCING, RUN_SUBMITTING):
            return  # failed with its reason already, or cancelled meanwhile
        for job in snap.jobs:
            if job.status == SUBMITTING and job.id not in self.submitter.in_flight:
                with contextlib.suppress(SvcError):
                    await self.submitter.reconcile(snap.run, job)
        message = str(exc) if isinstance(exc, SvcError) else f"launch failed: {type(exc).__name__}: {exc}"
        await self.host.store.run(job_rows.cancel_unsubmitted, run_id, CANCELLED)
        await self._move(run_id, RUN_FAILED, error=message, only_from=[RUN_PENDING, RUN_SYNCING, RUN_SUBMITTING])
        await self.cancel_jobs(run_id)

    async def _launch(self, run_id: str) -> None:
        snap = await self._snapshot(run_id)
        if snap is None or snap.run.status not in (RUN_PENDING, RUN_SYNCING):
            return
        run = snap.run
        mounts: list[str] = json.loads(run.sync_mounts)
        async with contextlib.AsyncExitStack() as locks:
            path = [(RUN_SYNCING, [RUN_PENDING]), (RUN_SUBMITTING, [RUN_SYNCING])]
            if mounts:
                await self._move(run_id, RUN_SYNCING, only_from=[RUN_PENDING])
                await self._sync(run, mounts, locks)
                path = path[1:]
            submitting = await self._move_along(run_id, path)  # nothing to sync: both changes in one write
            if submitting is None:
                return  # cancelled meanwhile
            try:
                config = self.host.config()
                for job in snap.jobs:
                    definition = JobDefinition.model_validate_json(job.definition)
                    render_job(self.host.plugins, definition, config)
            except (RenderError, ConfigError) as exc:
                await self._fail(run_id, f"script rendering failed: {exc}")
                raise RenderError(f"workflow run {run_id}: script rendering failed: {exc}") from exc
            # the jobs as read above (waiting: only a cancel changes them, and a submission's compare-and-set sees it)
            failures = await self._pass(run_id, launching=True, read=dataclasses.replace(snap, run=submitting))
        if failures:
            name, failure = failures[0]
            message = f"submission of job {name!r} failed: {failure}"
            await self._fail(run_id, message)
            await self.cancel_jobs(run_id)
            if isinstance(failure, RenderError):
                raise RenderError(f"workflow run {run_id}: {message}") from failure
            raise TransportError(f"workflow run {run_id}: {message}") from failure
        await self._move(run_id, RUN_RUNNING, only_from=[RUN_SUBMITTING])

    async def _sync(self, run: WorkflowRunRecord, mounts: list[str], locks: contextlib.AsyncExitStack) -> None:
        """Sync the run's mounts, keeping each mount's lock until the first submissions are done."""
        name = ""
        try:
            for name in mounts:
                profile = mount_profile(self.host.transports.spec(run.transport))
                backend = self.host.sync_backend(profile)
                mount = find_mount(self.host.transports.config.profiles, profile, name)
                await locks.enter_async_context(backend.lock(mount))
                await backend.sync(mount)
        except Exception as exc:
            message = f"sync of mount {name!r} failed: {exc}"
            await self._fail(run.id, message)
            if isinstance(exc, SyncError):
                raise SyncError(f"workflow run {run.id}: {message}") from exc
            raise

    async def resume(self, run_id: str) -> None:
        """Go on with a run taken over from an engine that stopped (crashed, or shut down)."""
        snap = await self._snapshot(run_id)
        if snap is None:
            return
        if snap.run.status in (RUN_PENDING, RUN_SYNCING):
            if snap.run.status == RUN_SYNCING:
                with contextlib.suppress(SvcError):  # the run is marked failed with the reason
                    await self.launch(run_id)
            return
        self.host.monitor.poke(snap.run.transport)
        with contextlib.suppress(SvcError):  # states fresh before deciding: a parent may have ended meanwhile
            await self.host.monitor.refresh(snap.run.transport, max_age=0)
        await self.advance(run_id)
        await self._move(run_id, RUN_RUNNING, only_from=[RUN_SUBMITTING])

    # -- advance ---------------------------------------------------------------------------------------------

    async def advance(self, run_id: str) -> None:
        """Apply the plan until nothing is left to do now (a failed submission needs another pass)."""
        async with self._lock(run_id):
            for _ in range(MAX_PASSES):
                if not await self._pass(run_id, launching=False):
                    break
        self._drop_finished(run_id)

    async def _pass(
        self, run_id: str, *, launching: bool, read: RunSnapshot | None = None
    ) -> list[tuple[str, SvcError]]:
        """One plan applied (to ``read``, the run as its launch has just read and moved it); returns the submissions
        that failed."""
        snap = read or await self._settled_snapshot(run_id, launching=launching)
        if snap is None:
            return []
        now = utc_now()
        decided = plan(snap.views(), now)
        if decided.updates:
            await self.host.store.run(job_rows.apply_updates, run_id, decided.updates, now)
            if any(update.resources or update.exclude for update in decided.updates.values()):
                snap = await self._snapshot(run_id) or snap  # a retry goes out with its escalated resources
        rows = {job.name: job for job in snap.jobs}
        if decided.cancel:
            warnings = await self.submitter.scancel(
                snap.run.transport, [(n, rows[n].job_id or "") for n in decided.cancel]
            )
            for warning in warnings:
                log.warning("run %s: could not cancel a job that can never start: %s", run_id, warning)
        failures = await self._submit_planned(snap, decided, launching=launching)
        if decided.run_status is not None and not failures:
            await self._move(
                run_id, decided.run_status, error=decided.run_error, only_from=[RUN_RUNNING, RUN_SUBMITTING]
            )
        if decided.wake_at is not None:
            self.schedule(run_id, (decided.wake_at - now).total_seconds())
        self.notify(run_id)
        return failures

    async def _settled_snapshot(self, run_id: str, *, launching: bool) -> RunSnapshot | None:
        """The run if this engine should plan it now, with ``SUBMITTING`` rows left by a crash settled."""
        snap = await self._snapshot(run_id)
        if snap is None or snap.terminal or snap.run.owner != self.owner:
            return None
        if snap.run.status in (RUN_PENDING, RUN_SYNCING) and not launching:
            return None
        stale = [job for job in snap.jobs if job.status == SUBMITTING and job.id not in self.submitter.in_flight]
        for job in stale:
            await self.submitter.reconcile(snap.run, job)
        return await self._snapshot(run_id) if stale else snap

    async def _submit_planned(self, snap: RunSnapshot, decided: Plan, *, launching: bool) -> list[tuple[str, SvcError]]:
        """Submit what the plan says, in order, each child pointing at its parents' new job ids."""
        rows = {job.name: job for job in snap.jobs}
        ids = {job.name: job.job_id for job in snap.jobs}
        failures: list[tuple[str, SvcError]] = []
        for name, handed in decided.submit:
            parents = [(kind, ids[parent]) for kind, parent in handed if ids.get(parent) is not None]
            if len(parents) < len(handed):
                continue  # a parent's submission failed in this pass; the next pass decides
            expected = decided.updates[name].status if name in decided.updates else rows[name].status
            try:
                ids[name] = await self.submitter.submit(snap.run, rows[name], dependency_flag(parents), expected)
            except RunCancelled:
                break
            except SvcError as exc:
                failures.append((name, exc))
                await self.submitter.failed_attempt(rows[name], exc, retry=not launching)
                if launching:
                    break
        if decided.submit:
            self.host.monitor.poke(snap.run.transport)  # once per pass: one refresh soon for all new jobs
        return failures

    # -- cancel ----------------------------------------------------------------------------------------------

    async def cancel_jobs(self, run_id: str, *, cancelled: Collection[str] = ()) -> list[str]:
        """Cancel every live job of a run (but those in ``cancelled``: cancelled already) and give unsubmitted ones
        ``CANCELLED``; returns the warnings."""
        await self.host.store.run(job_rows.cancel_unsubmitted, run_id, CANCELLED)
        snap = await self._snapshot(run_id)
        if snap is None:
            return []
        live = [
            (job.name, job.job_id)
            for job in snap.jobs
            if job.job_id is not None and job.job_id not in cancelled and snap.job_status(job) in repo.LIVE_STATUSES
        ]
        warnings = await self.submitter.scancel(snap.run.transport, live)
        queued = [
            job.job_id
            for job in snap.jobs
            if job.job_id is not None
            and job.job_id not in cancelled
            and array_of(job.job_id) is not None
            and snap.job_status(job) == JobState.PENDING.value
        ]
        await self.submitter.never_started(snap.run.transport, queued)
        self.notify(run_id)
        return warnings
