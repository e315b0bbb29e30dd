"""Bringing a sweep up to date with its cells; any process may do it, any number of times.

The counters are recounted, ``fail_fast`` and the failure budget are applied (a failed cell, or one failure too
many, cancels the cells not launched yet, but those being launched; the budget's reason becomes the sweep's
``error`` at once, and its launched cells are cancelled by the orchestrator), the status the counters call for
is set by compare-and-set, and each change is announced once with ``sweep_run.status_changed``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from svc_host.plugin_core.records import Event
from svc_host.sweeps import cell_counts, cell_moves, steering
from svc_host.sweeps import store as repo
from svc_host.sweeps.status import FAILED, budget_message, derive, failure_message, over_budget

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports
    from svc_host.store.tables import SweepRunRecord

FAIL_FAST_REASON = "not started: fail_fast stopped the sweep after a cell failed"
BUDGET_REASON = "not started: the sweep stopped after more than max_failures cells failed"
BUDGET_CANCEL_REASON = "cancelled: the sweep stopped after more than max_failures cells failed"


async def settle(host: Ports, sweep_id: int, *, launching: Collection[str] = ()) -> SweepRunRecord | None:
    """The sweep after bringing it up to date (None when it does not exist)."""
    sweep = await host.store.run(repo.recounted, sweep_id)
    if sweep is None:
        return None
    counts = repo.counters(sweep)
    cancelled = sweep.cancel_requested_at is not None
    if sweep.fail_fast and counts.failed and counts.pending and not cancelled:
        await host.store.run(cell_moves.drain_pending, sweep_id, FAIL_FAST_REASON, keep=set(launching))
        sweep = await host.store.run(repo.get_sweep, sweep_id) or sweep
        counts = repo.counters(sweep)
    if sweep.max_failures is not None and over_budget(counts, sweep.max_failures) and not cancelled:
        if counts.pending:
            await host.store.run(cell_moves.drain_pending, sweep_id, BUDGET_REASON, keep=set(launching))
        reason = budget_message(counts, sweep.cell_count, sweep.max_failures)
        noted = await host.store.run(steering.note_stop, sweep_id, reason)
        sweep = await host.store.run(repo.get_sweep, sweep_id) or sweep
        counts = repo.counters(sweep)
        if noted:
            announce(host, sweep, sweep.status)
    after = derive(sweep.status, counts, sweep.cell_count, cancel_requested=cancelled)
    if after == sweep.status:
        return sweep
    error = None
    if after == FAILED:
        first = await host.store.run(repo.first_failure, sweep_id)
        error = failure_message(counts, sweep.cell_count, first, max_failures=sweep.max_failures)
    moved = await host.store.run(cell_moves.move_status, sweep_id, sweep.status, after, error=error)
    now = await host.store.run(repo.get_sweep, sweep_id) or sweep
    if moved:
        announce(host, now, sweep.status)
    return now


def announce(host: Ports, sweep: SweepRunRecord, before: str) -> None:
    """Emit ``sweep_run.status_changed``: ``{id, name, from, to, cell_count, cells_pending, ..., cells_held,
    paused, error}``. A pause, a resume or a spent failure budget is announced too, ``from`` equal to ``to``."""
    counts = {name: getattr(sweep, name) for name in (*cell_counts.COUNTED, "cells_held")}
    payload = {
        "id": sweep.id,
        "name": sweep.name,
        "from": before,
        "to": sweep.status,
        "cell_count": sweep.cell_count,
        "paused": sweep.paused_at is not None,
        "error": sweep.error,
    }
    host.emit(Event(name="sweep_run.status_changed", payload={**payload, **counts}))
