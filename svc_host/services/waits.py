"""Waiting for the next change of a job, a workflow run or a sweep, woken by the process's event hub.

The wait subscribes to the hub the dashboard's stream reads (``svc_host.runtime.events``) before it reads the subject
from the store, so no event falls between the two. Each event that may concern the subject makes it read the
store again; the first read that differs from the first one ends the wait with the difference. It never asks
the scheduler anything: the monitor's shared tick does, and while a wait is open on a transport the monitor
ticks at least every ``Monitor.watched_interval`` seconds. Every ``RECHECK_SECONDS`` without an event the store
is read anyway, for changes another svc process made (its events reach its own hub, not this one).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from svc_host.domain.jobs import JobState
from svc_host.errors import NotFoundError
from svc_host.runtime.changes import EVENTS, Observed, Part, Subject, concerns, diff
from svc_host.runtime.events import event_hub
from svc_host.services.ports import RunPorts

RECHECK_SECONDS = 5.0


@dataclass(frozen=True)
class Outcome:
    """How a wait ended: ``changed`` with the ``changes`` since the first read, or not (the timeout, or a subject
    that can no longer change); ``observed`` is the last read."""

    changed: bool
    observed: Observed
    changes: list[dict[str, Any]] = field(default_factory=list)


async def wait_for_change(
    host: RunPorts,
    subject: Subject,
    timeout: float,
    *,
    since_status: str | None = None,
    heartbeat: Callable[[float], Awaitable[None]] | None = None,
) -> Outcome:
    """Wait up to ``timeout`` seconds for ``subject`` to change.

    ``since_status`` is the status the caller last saw: when the subject's status already differs, the wait ends
    at once with that change. A subject that can no longer change ends it at once, unchanged. ``heartbeat`` is
    called with the seconds waited so far each time ``RECHECK_SECONDS`` pass without a change.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    subscription = event_hub().subscribe(EVENTS[subject.kind])
    try:
        first = await observe(host, subject)
        if since_status is not None and since_status != first.status:
            change = {"subject": subject.kind, "id": subject.id, "from": since_status, "to": first.status}
            return Outcome(True, first, [change])
        if first.final:
            return Outcome(False, first)
        with host.monitor.watch(first.transport):
            latest = first
            while (remaining := deadline - loop.time()) > 0:
                batch = await subscription.next_batch(min(remaining, RECHECK_SECONDS))
                if batch is None:  # the hub ended its streams: the server is shutting down
                    break
                woken = subscription.take_lost() or not batch
                for event in batch:
                    body = json.loads(event.data)
                    woken = woken or concerns(subject, event.name, body["payload"], latest)
                if not woken:
                    continue
                latest = await observe(host, subject)
                changes = diff(first, latest)
                if changes:
                    return Outcome(True, latest, changes)
                if not batch and heartbeat is not None:
                    await heartbeat(timeout - max(0.0, deadline - loop.time()))
            return Outcome(False, await observe(host, subject))
    finally:
        subscription.close()


async def observe(host: RunPorts, subject: Subject) -> Observed:
    """Read the subject from the store (``NotFoundError`` when svc does not know it)."""
    if subject.kind == "job":
        return await _job(host, subject)
    if subject.kind == "run":
        return await _run(host, str(subject.id))
    return await _sweep(host, int(subject.id))


async def _job(host: RunPorts, subject: Subject) -> Observed:
    from svc_host.store import jobs as job_repo

    transport, job_id = subject.transport or "local", str(subject.id)
    record = await host.store.run(job_repo.find_job, transport, job_id)
    if record is None:
        raise NotFoundError(
            f"job {job_id} on {transport!r} was not submitted through svc, so svc does not follow it; "
            "get_job_status reads any job"
        )
    view = {
        "job_id": job_id,
        "transport": transport,
        "name": record.name,
        "status": record.state,
        "raw_state": record.raw_state,
        "exit_code": record.exit_code,
    }
    parts = {"job": Part("job", job_id, record.state)}
    return Observed(record.state, JobState(record.state).is_terminal, transport, parts, view)


async def _run(host: RunPorts, run_id: str) -> Observed:
    from svc_host.workflows import views

    engine = await host.workflow_engine()
    snap = await engine.get(run_id)
    parts = {"run": Part("run", run_id, snap.run.status)}
    parts.update({f"job:{job.name}": Part("job", job.job_id, snap.job_status(job), job.name) for job in snap.jobs})
    view = {
        "run_id": run_id,
        "workflow": snap.run.workflow_name,
        "status": snap.run.status,
        "run_error": snap.run.error,
        "results": views.results(snap, await engine.attempts(run_id)),
    }
    job_ids = frozenset(job.job_id for job in snap.jobs if job.job_id)
    return Observed(snap.run.status, snap.terminal, snap.run.transport, parts, view, job_ids)


async def _sweep(host: RunPorts, sweep_id: int) -> Observed:
    from svc_host.sweeps.status import TERMINAL
    from svc_host.sweeps.views import mcp_result

    orchestrator = await host.sweep_orchestrator()
    sweep = await orchestrator.get(sweep_id)
    cells = await orchestrator.cells(sweep_id)
    parts = {"sweep": Part("sweep", sweep_id, sweep.status)}
    parts.update({f"cell:{cell.id}": Part("cell", cell.id, cell.status) for cell in cells})
    view = {**mcp_result(sweep), "cells_running": sweep.cells_running, "cells_pending": sweep.cells_pending}
    return Observed(sweep.status, sweep.status in TERMINAL, sweep.transport, parts, view)
