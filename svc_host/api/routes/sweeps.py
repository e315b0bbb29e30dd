"""``/api/sweep_runs``: list, detail, cells, cancel, pause and resume of sweeps.

A sweep is started with ``POST /api/workflows/{name}/run`` and a ``sweep`` object in the body (see the
workflows router). A sweep id that is not an integer is 404, like an unknown one. Cancelling a sweep that
ended without a cancel is 422, as for runs; a second cancel answers 202 with the sweep as it is. Pause and
resume answer 200 with the sweep (a second pause or resume changes nothing), 409 for a sweep that ended or
is being cancelled.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from svc_host.api.deps import HostDep
from svc_host.api.params import MAX_ROW_ID, error_responses
from svc_host.errors import NotFoundError, SvcError
from svc_host.runtime.throttle import sweep_waiter
from svc_host.sweeps.cell_timing import cell_jobs_times, cell_timing
from svc_host.sweeps.queued import queue_reason, queued_cells
from svc_host.sweeps.views import cell_view, sweep_view

if TYPE_CHECKING:
    from svc_host.host import Host
    from svc_host.store.tables import SweepRunRecord

router = APIRouter(prefix="/api/sweep_runs", tags=["sweeps"])


def _sweep_id(raw: str) -> int:
    # isascii: str.isdigit() accepts other scripts' digits; past MAX_ROW_ID no row exists (and SQLite would overflow)
    if not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(MAX_ROW_ID)) or int(raw) > MAX_ROW_ID:
        raise NotFoundError(f"sweep run {raw[:40]!r} not found")
    return int(raw)


@router.get("")
async def list_sweeps(host: HostDep) -> list[dict[str, Any]]:
    """Sweeps, newest first (at most 200)."""
    orchestrator = await host.sweep_orchestrator()
    return await _views(host, await orchestrator.sweeps())


@router.get("/{sweep_id}", responses=error_responses(404))
async def get_sweep(sweep_id: str, host: HostDep) -> dict[str, Any]:
    """One sweep with its counters; 404."""
    orchestrator = await host.sweep_orchestrator()
    return (await _views(host, [await orchestrator.get(_sweep_id(sweep_id))]))[0]


async def _views(host: Host, sweeps: list[SweepRunRecord]) -> list[dict[str, Any]]:
    """The sweeps as shown, with how many running cells still wait in Slurm's queue and why (an array's limit)."""
    waiting = await host.store.run(queued_cells, [sweep.id for sweep in sweeps if sweep.id is not None])
    views = []
    for sweep in sweeps:
        in_queue = waiting.get(sweep.id or 0, 0)
        reason = None
        if in_queue and sweep.array_job_id is not None:
            with contextlib.suppress(SvcError):  # an unreachable cluster: the count stands without its reason
                queue = await host.transports.snapshots.queue(sweep.transport)
                reason = queue_reason(queue.value, sweep.array_job_id)
        views.append(sweep_view(sweep, _queued(host, sweep.id), in_queue=in_queue, queue_reason=reason))
    return views


@router.get("/{sweep_id}/cells", responses=error_responses(404))
async def get_cells(sweep_id: str, host: HostDep) -> list[dict[str, Any]]:
    """The cells of a sweep by status, started_at, id, each with its jobs' ids (``job_ids``) and its jobs' own
    state and times (``job_state``, ``job_started_at``, ``job_ended_at``: a launched cell may be queued); 404."""
    orchestrator = await host.sweep_orchestrator()
    number = _sweep_id(sweep_id)
    cells = await orchestrator.cells_with_jobs(number)
    times = await host.store.run(cell_jobs_times, number)
    return [
        {**cell_view(cell, job_ids, host.submit_throttle.reason(cell.id)), **cell_timing(times.get(cell.id, []))}
        for cell, job_ids in cells
    ]


@router.post("/{sweep_id}/cancel", status_code=202, responses=error_responses(404, 422))
async def cancel_sweep(sweep_id: str, host: HostDep) -> JSONResponse:
    """Cancel a sweep: 202 with the sweep (``draining``); 404; 422 when it ended without a cancel."""
    orchestrator = await host.sweep_orchestrator()
    return JSONResponse(sweep_view(await orchestrator.cancel(_sweep_id(sweep_id))), status_code=202)


def _queued(host: Host, sweep_id: int | None) -> str | None:
    """Why cells of the sweep wait to be submitted (``svc_host.runtime.throttle``), or None."""
    return host.submit_throttle.reason(sweep_waiter(sweep_id)) if sweep_id is not None else None


@router.post("/{sweep_id}/pause", responses=error_responses(404, 409, e409="the sweep ended or is being cancelled"))
async def pause_sweep(sweep_id: str, host: HostDep) -> dict[str, Any]:
    """Pause a sweep: no new cell is launched and its queued jobs are held (``paused_at`` set, ``cells_held``
    counted); running cells run on. 200 with the sweep; 404; 409 when it ended or is being cancelled."""
    orchestrator = await host.sweep_orchestrator()
    return sweep_view(await orchestrator.pause(_sweep_id(sweep_id)))


@router.post("/{sweep_id}/resume", responses=error_responses(404, 409, e409="the sweep ended or is being cancelled"))
async def resume_sweep(sweep_id: str, host: HostDep) -> dict[str, Any]:
    """Resume a paused sweep: its held jobs are released and cells are launched again. 200 with the sweep; 404;
    409 when it ended or is being cancelled."""
    orchestrator = await host.sweep_orchestrator()
    return sweep_view(await orchestrator.resume(_sweep_id(sweep_id)))
