"""Cancelling an array sweep cancels its cells before the array: a task's CANCELLED that arrives meanwhile (the
monitor saw the scancel) must meet a cancelled cell, never a running one that would read it as a failure (a full run
once ended a cell ``failed: job 'nap' ended CANCELLED`` that way)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from types import SimpleNamespace
from typing import Any

from svc_host.sweeps import stopping
from svc_host.sweeps import store as repo


async def test_the_cells_are_cancelled_before_the_array_and_its_queued_tasks() -> None:
    calls: list[tuple[str, Any]] = []

    async def run(function: Callable[..., Any], *args: Any) -> Any:
        return {repo.waiting_in_queue: [("c2", "7_2")], repo.cell_ids: ["c0", "c1", "c2"]}[function]

    async def cancel(run_id: str, *, error: str | None = None, cancelled: Collection[str] = ()) -> list[str]:
        calls.append(("cell", run_id))
        assert list(cancelled) == ["7_0", "7_1", "7_2"]  # the array's tasks: its scancel ends them, not the cell's
        return []

    async def scancel(transport: str, jobs: list[tuple[str, str]]) -> list[str]:
        calls.append(("scancel", jobs))
        return []

    async def never_started(transport: str, job_ids: list[str]) -> None:
        calls.append(("never started", job_ids))

    engine = SimpleNamespace(
        host=SimpleNamespace(store=SimpleNamespace(run=run)),
        cancel=cancel,
        driver=SimpleNamespace(submitter=SimpleNamespace(scancel=scancel, never_started=never_started)),
    )
    sweep = SimpleNamespace(array_job_id="7", cell_count=3, transport="local", name="grid")
    assert await stopping.cancel_launched(engine, sweep, 1) == []  # type: ignore[arg-type]
    assert sorted(calls[:3]) == [("cell", "c0"), ("cell", "c1"), ("cell", "c2")]
    assert calls[3:] == [("scancel", [("grid", "7")]), ("never started", ["7_2"])]
