"""Stopping a sweep's jobs on the scheduler: cancelling its launched cells (an array's tasks with one ``scancel``),
cancelling the array tasks that have not started once a cell failed under ``fail_fast``, and holding (releasing) the
queued jobs of a paused (resumed) sweep. The sweep orchestrator decides when; these do it, through the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection
from typing import TYPE_CHECKING

from svc_host.errors import InvalidStateError, SvcError
from svc_host.slurm.arrays import array_of, task_id
from svc_host.sweeps import cell_counts
from svc_host.sweeps import store as repo
from svc_host.sweeps.settle import FAIL_FAST_REASON

if TYPE_CHECKING:
    from svc_host.store.tables import SweepRunRecord
    from svc_host.workflows.engine import WorkflowEngine

log = logging.getLogger(__name__)


async def cancel_launched(
    engine: WorkflowEngine, sweep: SweepRunRecord, sweep_id: int, *, error: str | None = None
) -> list[str]:
    """Cancel the sweep's cells in flight (an array's tasks with one scancel of the array, its tasks that never
    started recorded ``CANCELLED``), each with ``error``; returns the warnings of the array's scancel."""
    array = sweep.array_job_id
    done = [] if array is None else [task_id(array, index) for index in range(sweep.cell_count)]
    queued = [] if array is None else await engine.host.store.run(repo.waiting_in_queue, sweep_id)
    # The cells are cancelled first: a task's end that arrives after (from the array's scancel below, or from the
    # monitor) then meets a cancelled cell, never a running one that would take CANCELLED for a failure.
    flying = await engine.host.store.run(repo.cell_ids, sweep_id, cell_counts.IN_FLIGHT)
    await asyncio.gather(*(cancel_cell(engine, run_id, error=error, cancelled=done) for run_id in flying))
    if array is None:
        return []
    # the whole array in one scancel (a retried cell's own jobs were cancelled with their cell)
    warnings = await engine.driver.submitter.scancel(sweep.transport, [(sweep.name, array)])
    await engine.driver.submitter.never_started(sweep.transport, [job_id for _, job_id in queued])
    return warnings


async def stop_queued_tasks(engine: WorkflowEngine, sweep_id: int, transport: str) -> None:
    """fail_fast in an array: cancel the cells whose task has not started (one scancel for all of them)."""
    store = engine.host.store
    if not await store.run(repo.waiting_in_queue, sweep_id):
        return
    with contextlib.suppress(SvcError):  # states fresh, so a task that just started runs to its end
        await engine.host.monitor.refresh(transport)
    queued = await store.run(repo.waiting_in_queue, sweep_id)
    if not queued:
        return
    tasks = [job_id for _, job_id in queued]
    for warning in await engine.driver.submitter.scancel(transport, [("array task", job_id) for job_id in tasks]):
        log.warning("sweep %s: %s", sweep_id, warning)
    await engine.driver.submitter.never_started(transport, tasks)
    for run_id, _ in queued:
        await cancel_cell(engine, run_id, error=FAIL_FAST_REASON, cancelled=tasks)


async def cancel_cell(
    engine: WorkflowEngine, run_id: str, *, error: str | None = None, cancelled: Collection[str] = ()
) -> None:
    try:
        for warning in await engine.cancel(run_id, error=error, cancelled=cancelled):
            log.warning("cell %s: %s", run_id, warning)
    except InvalidStateError:
        pass  # it ended meanwhile


async def hold_jobs(engine: WorkflowEngine, sweep: SweepRunRecord, job_ids: list[str], *, release: bool) -> None:
    """One ``scontrol uhold`` (``release``): an array's tasks by the array's id, any other job by its own."""
    array = sweep.array_job_id
    ids = [job_id for job_id in job_ids if array is None or array_of(job_id) != array]
    if array is not None and len(ids) < len(job_ids):
        ids.insert(0, array)
    if not ids:
        return
    try:
        await engine.host.transport(sweep.transport).hold(ids, release=release)
    except SvcError as exc:  # a job that ended meanwhile; the others were held (released) all the same
        log.warning("sweep %s: %s of queued jobs: %s", sweep.id, "release" if release else "hold", exc)
