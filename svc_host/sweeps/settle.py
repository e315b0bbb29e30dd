"""Bringing a sweep up to date with its cells; any process may do it, any number of times.

The counters are recounted, ``fail_fast`` is applied (a failed cell cancels the cells not launched yet, but
those being launched), the status the counters call for is set by compare-and-set, and each change is
announced once with ``sweep_run.status_changed``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from svc_host.plugin_types import Event
from svc_host.sweeps import store as repo
from svc_host.sweeps.status import FAILED, derive, failure_message

if TYPE_CHECKING:
    from svc_host.context import Host
    from svc_host.store.tables import SweepRunRecord

FAIL_FAST_REASON = "not started: fail_fast stopped the sweep after a cell failed"


async def settle(host: Host, sweep_id: int, *, launching: Collection[str] = ()) -> SweepRunRecord | None:
    """The sweep after bringing it up to date (None when it does not exist)."""
    sweep = await host.store.run(repo.recounted, sweep_id)
    if sweep is None:
        return None
    counts = repo.counters(sweep)
    cancelled = sweep.cancel_requested_at is not None
    if sweep.fail_fast and counts.failed and counts.pending and not cancelled:
        await host.store.run(repo.drain_pending, sweep_id, FAIL_FAST_REASON, keep=set(launching))
        sweep = await host.store.run(repo.get_sweep, sweep_id) or sweep
        counts = repo.counters(sweep)
    after = derive(sweep.status, counts, sweep.cell_count, cancel_requested=cancelled)
    if after == sweep.status:
        return sweep
    error = None
    if after == FAILED:
        error = failure_message(counts, sweep.cell_count, await host.store.run(repo.first_failure, sweep_id))
    moved = await host.store.run(repo.move_status, sweep_id, sweep.status, after, error=error)
    now = await host.store.run(repo.get_sweep, sweep_id) or sweep
    if moved:
        announce(host, now, sweep.status)
    return now


def announce(host: Host, sweep: SweepRunRecord, before: str) -> None:
    """Emit ``sweep_run.status_changed``: ``{id, name, from, to, cell_count, cells_pending, ...}``."""
    counts = {name: getattr(sweep, name) for name in repo.COUNTED}
    payload = {"id": sweep.id, "name": sweep.name, "from": before, "to": sweep.status, "cell_count": sweep.cell_count}
    host.plugins.emit(Event(name="sweep_run.status_changed", payload={**payload, **counts}))
