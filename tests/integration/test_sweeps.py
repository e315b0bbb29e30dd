"""Sweeps end to end on the dev cluster: the ``local`` transport, and SSH for the session pool.

Every job is short and writes into the test's own working directory; whatever a test leaves live is
cancelled (only jobs this test's store knows, never anyone else's).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from svc_host import hookimpl
from svc_host.domain.submission import JobDefinition, RenderedScript
from svc_host.errors import InvalidRequestError, InvalidStateError
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.store import jobs as job_repo
from svc_host.store.tables import JobRecord, SweepRunRecord
from svc_host.sweeps.cells import SweepRequest, prepare_sweep
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.testing.waiting import eventually
from svc_host.workflows.engine import RunChange, WorkflowEngine
from svc_host.workflows.prepare import RunRequest

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture
def svc_database_url(database_url: str) -> str:
    """This module runs on SQLite and on PostgreSQL."""
    return database_url


class Events:
    """An ``svc_event`` observer of sweep events."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    @hookimpl
    def svc_event(self, event: Event) -> None:
        if event.name == "sweep_run.status_changed":
            self.seen.append((event.payload["from"], event.payload["to"]))


async def start(host: Host, *, lease: float = 30.0, arrays: bool = False) -> SweepOrchestrator:
    """An orchestrator submitting one sbatch per cell unless ``arrays`` (test_sweep_arrays.py tests arrays)."""
    engine = WorkflowEngine(host, adopt_orphans=lease < 30, lease_seconds=lease, renew_seconds=lease / 4)
    await engine.start()
    orchestrator = SweepOrchestrator(
        engine, adopt_orphans=lease < 30, lease_seconds=lease, renew_seconds=lease / 4, arrays=arrays
    )
    await orchestrator.start()
    return orchestrator


async def stop(orchestrator: SweepOrchestrator) -> None:
    host = orchestrator.host
    await orchestrator.close()
    await orchestrator.engine.close()
    with contextlib.suppress(AssertionError):  # the monitor sees the last jobs end and stops by itself (never cut
        await eventually(  # mid-command); a teardown goes on however it went
            lambda: host.store.run(job_repo.live_jobs),
            until=lambda live: not live,
            timeout=30,
            interval=0.5,
            what="no live job left",
        )
    loops = [task for task in host.monitor._loops.values() if not task.done()]
    if loops:
        await asyncio.wait(loops, timeout=15)
    await host.monitor.stop()
    await host.transports.close()


@pytest.fixture
async def orchestrator(make_host: Callable[[], Host]) -> AsyncIterator[SweepOrchestrator]:
    made = await start(make_host())
    yield made
    await stop(made)


def request(path: Path, matrix: dict[str, list[Any]], **spec: Any) -> SweepRequest:
    return SweepRequest(run=RunRequest(yaml_path=path), spec=parse_sweep({"matrix": matrix, **spec}), source="web")


def workflow(work: Path, text: str) -> Path:
    path = work / "sweep.yaml"
    path.write_text(text)
    return path


async def finish(orchestrator: SweepOrchestrator, sweep_id: int | None, timeout: float = 240) -> SweepRunRecord:
    assert sweep_id is not None
    done = await orchestrator.wait(sweep_id, timeout=timeout)
    jobs = {record.job_id: record.state for record in job_records(orchestrator.host)}
    assert done.status in ("completed", "failed", "cancelled"), (
        f"still {done.status} after {timeout} s: cells (pending, running, completed, failed, cancelled) "
        f"{counts(done)}, held {done.cells_held}, paused at {done.paused_at}, jobs {jobs}"
    )
    return done


def counts(sweep: SweepRunRecord) -> tuple[int, int, int, int, int]:
    return (sweep.cells_pending, sweep.cells_running, sweep.cells_completed, sweep.cells_failed, sweep.cells_cancelled)


def job_records(host: Host) -> list[JobRecord]:
    return host.store.call(lambda session: list(session.exec(select(JobRecord))))


GRID = """\
name: grid
args: {a: 0, b: none}
jobs:
  - {name: cell, command: "echo {{ a }}-{{ b }} > out-{{ a }}-{{ b }}.txt"}
"""


async def test_a_3x3_sweep_completes_with_right_counters(orchestrator: SweepOrchestrator, work: Path) -> None:
    events = Events()
    orchestrator.host.plugins.register(events, "events")
    flying: list[int] = []

    async def watch(change: RunChange) -> None:
        if change.sweep_id is not None:
            flying.append((await orchestrator.get(change.sweep_id)).cells_running)

    orchestrator.engine.add_listener(watch)
    sweep = await orchestrator.submit(request(workflow(work, GRID), {"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    assert (sweep.status, sweep.cell_count, counts(sweep)) == ("pending", 9, (9, 0, 0, 0, 0))
    done = await finish(orchestrator, sweep.id)
    assert (done.status, counts(done), done.error) == ("completed", (0, 0, 9, 0, 0), None)
    assert done.completed_at is not None
    assert events.seen == [("pending", "running"), ("running", "completed")]
    assert max(flying) <= 4 < len(flying)  # max_parallel defaults to 4
    outputs = sorted(path.name for path in work.glob("out-*.txt"))
    assert outputs == [f"out-{a}-{b}.txt" for a in (1, 2, 3) for b in "xyz"]
    assert (work / "out-2-y.txt").read_text() == "2-y\n"
    cells = await orchestrator.cells(done.id or 0)
    assert {(cell.status, cell.triggered_by) for cell in cells} == {("completed", "web")}
    assert sorted(cell.args for cell in cells)[0] == '{"a": 1, "b": "x"}'
    assert len(job_records(orchestrator.host)) == 9  # one job per cell, none twice


FAILING = """\
name: flaky-grid
args: {x: 0}
jobs:
  - {name: cell, command: "test {{ x }} -ne 1 && sleep 3"}
"""


async def test_fail_fast_stops_launching(orchestrator: SweepOrchestrator, work: Path) -> None:
    spec = {"fail_fast": True, "max_parallel": 2}
    sweep = await orchestrator.submit(request(workflow(work, FAILING), {"x": [1, 2, 3, 4, 5, 6]}, **spec))
    done = await finish(orchestrator, sweep.id)
    assert (done.status, counts(done)) == ("failed", (0, 0, 1, 1, 4))
    assert done.cancel_requested_at is None
    assert done.error is not None
    assert done.error.startswith("1 of 6 cells failed; first: cell ")
    assert done.error.endswith("job 'cell' ended FAILED (exit code 1)")
    assert len(job_records(orchestrator.host)) == 2  # x=1 failed, x=2 ran to its end, nothing else launched
    cells = await orchestrator.cells(done.id or 0)
    drained = [cell for cell in cells if cell.status == "cancelled"]
    assert {cell.error for cell in drained} == {"not started: fail_fast stopped the sweep after a cell failed"}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # error handling, not the store: once is enough
@pytest.mark.parametrize("where", ["render", "submit"])
async def test_a_launch_that_raises_a_bug_fails_its_cell_with_the_error(
    orchestrator: SweepOrchestrator, work: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Not an ``SvcError`` (a bug in a plugin, an OSError) while a cell's jobs are rendered or submitted: the cell
    ends ``failed`` with the reason (not ``submitting`` forever), the others run, the counters add up and the
    sweep ends ``failed``."""
    host = orchestrator.host
    real_renderer, real_submit = host.plugins.renderer("default"), host.transport("local").submit

    def render(definition: JobDefinition) -> RenderedScript:
        if "echo 2-" in str(definition.command):
            raise RuntimeError("the plugin tripped over itself")
        return real_renderer.render(definition)

    async def submit(script: RenderedScript) -> str:
        if "echo 2-" in script.text:
            raise RuntimeError("the plugin tripped over itself")
        return await real_submit(script)

    if where == "render":
        renderers = {**host.plugins.renderers(), "default": dataclasses.replace(real_renderer, render=render)}
        monkeypatch.setattr(host.plugins, "renderers", lambda: renderers)
    else:
        monkeypatch.setattr(host.transport("local"), "submit", submit)
    sweep = await orchestrator.submit(request(workflow(work, GRID), {"a": [1, 2, 3]}, max_parallel=1))
    done = await finish(orchestrator, sweep.id, timeout=45)
    assert (done.status, counts(done)) == ("failed", (0, 0, 2, 1, 0))
    [failed] = [cell for cell in await orchestrator.cells(done.id or 0) if cell.status == "failed"]
    assert failed.error == "launch failed: RuntimeError: the plugin tripped over itself"
    assert done.error is not None
    assert done.error.startswith("1 of 3 cells failed; first: cell ")
    assert len(job_records(host)) == 2


SLOW = """\
name: slow-grid
args: {x: 0}
jobs:
  - {name: cell, command: "sleep 60"}
"""


async def test_cancel_drains_and_a_second_cancel_changes_nothing(orchestrator: SweepOrchestrator, work: Path) -> None:
    events = Events()
    orchestrator.host.plugins.register(events, "events")
    sweep = await orchestrator.submit(request(workflow(work, SLOW), {"x": [1, 2, 3, 4, 5]}, max_parallel=2))
    assert sweep.id is not None
    sweep_id = sweep.id
    running = await eventually(
        lambda: orchestrator.get(sweep_id),
        until=lambda running: running.cells_running == 2 and not orchestrator._driven[sweep_id].launches,
        interval=0.2,
        what="2 cells running and launched",
    )
    job_ids = [record.job_id for record in job_records(orchestrator.host)]
    assert (running.cells_running, len(job_ids)) == (2, 2)
    cancelled = await orchestrator.cancel(sweep.id)
    assert cancelled.status == "draining"
    assert cancelled.cancel_requested_at is not None
    assert counts(cancelled) == (0, 2, 0, 0, 3)  # pending cells drained: counted cancelled
    done = await finish(orchestrator, sweep.id)
    assert (done.status, counts(done)) == ("cancelled", (0, 0, 0, 0, 5))
    await eventually(  # running jobs are cancelled in Slurm (scancel returns before they are gone)
        lambda: orchestrator.host.transport("local").statuses(job_ids),
        until=lambda seen: {status.state for status in seen.values()} == {"CANCELLED"},
        interval=0.5,
        what="the running jobs cancelled in Slurm",
    )
    again = await orchestrator.cancel(sweep.id)
    assert again.cancel_requested_at == done.cancel_requested_at
    assert again.status == "cancelled"
    assert events.seen == [("pending", "running"), ("running", "draining"), ("draining", "cancelled")]
    assert len(job_records(orchestrator.host)) == 2


async def test_1000_cells_prepare_1001_are_rejected_and_an_ended_sweep_is_not_cancelled(
    orchestrator: SweepOrchestrator, work: Path
) -> None:
    with pytest.raises(InvalidRequestError, match="the matrix has 1001 cells; at most 1000 are allowed"):
        parse_sweep({"matrix": {"a": list(range(7)), "b": list(range(143))}})
    thousand = request(workflow(work, GRID), {"a": list(range(100)), "b": list(range(10))})
    prepared = await asyncio.to_thread(prepare_sweep, orchestrator.host, thousand)
    assert len(prepared.cells) == 1000
    assert prepared.cells[999].args == {"a": 99, "b": 9}
    done = await finish(orchestrator, (await orchestrator.submit(request(workflow(work, GRID), {"a": [5]}))).id)
    with pytest.raises(InvalidStateError, match=f"sweep run {done.id} is already completed; nothing to cancel"):
        await orchestrator.cancel(done.id or 0)


# -- restart ------------------------------------------------------------------------------------------------


def crash(orchestrator: SweepOrchestrator) -> None:
    """What kill -9 leaves behind: tasks gone, leases and rows as they were."""
    engine = orchestrator.engine
    for owner in (orchestrator, engine):
        owner._closed = True
    for timer in engine._timers.values():
        timer.cancel()
    for task in [
        *(task for driven in orchestrator._driven.values() for task in driven.launches.values()),
        *orchestrator._passes.close(),
        orchestrator._lease_task,
        *engine._tasks,
        *engine._passes.close(),
        engine._lease_task,
        *engine.host.monitor._loops.values(),
    ]:
        if task is not None:
            task.cancel()


RESTART = """\
name: restart-grid
args: {x: 0}
jobs:
  - {name: cell, command: "sleep 2; echo {{ x }} >> ran.txt"}
"""


async def test_restart_mid_sweep_loses_no_cell_and_runs_none_twice(make_host: Callable[[], Host], work: Path) -> None:
    """Killed right after sbatch accepted the third cell's job, before its id was stored: the new server adopts
    that job by its marker, launches the rest, and every cell runs exactly once."""
    first = await start(make_host(), lease=2)
    local = first.host.transport("local")
    real_submit = local.submit
    submitted: list[str] = []
    hung = asyncio.Event()

    async def submit(script: Any) -> str:
        job_id = await real_submit(script)
        submitted.append(job_id)
        if len(submitted) == 3:
            hung.set()
            await asyncio.Event().wait()  # killed here
        return job_id

    local.submit = submit  # type: ignore[method-assign]
    sweep = await first.submit(request(workflow(work, RESTART), {"x": [1, 2, 3, 4, 5, 6]}, max_parallel=2))
    await asyncio.wait_for(hung.wait(), 60)
    crash(first)
    await first.host.transports.close()

    second = await start(make_host(), lease=2)
    try:
        done = await finish(second, sweep.id, timeout=90)
        assert (done.status, counts(done)) == ("completed", (0, 0, 6, 0, 0))
        assert done.owner == second.owner
        assert sorted((work / "ran.txt").read_text().split()) == ["1", "2", "3", "4", "5", "6"]
        assert len(job_records(second.host)) == 6
        assert submitted[2] in {record.job_id for record in job_records(second.host)}  # adopted, not resubmitted
    finally:
        await stop(second)


# -- SSH ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # SSH sessions, not the store: once is enough
async def test_over_ssh_max_parallel_20_shares_one_pool_of_8_sessions(dev_host: Host) -> None:
    orchestrator = await start(dev_host)
    remote = f"/tmp/svc-sweep-{uuid.uuid4().hex[:8]}"
    text = f"name: ssh-grid\nargs: {{x: 0}}\njobs:\n  - {{name: cell, command: 'true', work_dir: {remote}}}\n"
    path = workflow(Path.cwd(), text)
    opened: list[int] = []

    async def sample(change: RunChange) -> None:
        pool = orchestrator.engine.driver.submitter.routes.get(change.sweep_id or 0)
        if pool is not None:
            assert getattr(pool, "size", None) == 8
            opened.append(pool.opened)  # type: ignore[attr-defined]

    orchestrator.engine.add_listener(sample)
    try:
        run = RunRequest(yaml_path=path, transport="dev")
        spec = parse_sweep({"matrix": {"x": list(range(20))}, "max_parallel": 20})
        sweep = await orchestrator.submit(SweepRequest(run=run, spec=spec, source="mcp"))
        done = await finish(orchestrator, sweep.id, timeout=120)
        assert (done.status, counts(done)) == ("completed", (0, 0, 20, 0, 0))
        assert 1 < max(opened) <= 8  # sessions are opened on demand, so the last sample is the most
        assert orchestrator.engine.driver.submitter.routes == {}  # the pool is closed with the sweep
        assert not orchestrator._driven
    finally:
        await dev_host.transport("dev").check(["rm", "-rf", "--", remote])  # type: ignore[attr-defined]
        live = [record.job_id for record in dev_host.store.call(job_repo.live_jobs)]
        if live:
            await dev_host.transport("dev").cancel(live)
        await stop(orchestrator)
