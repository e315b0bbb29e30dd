"""Steering sweeps on the dev cluster: pause (no cell launched, queued jobs held in Slurm), resume, cancel while
paused, the failure budget ``max_failures``, and a pause that survives a restart. Jobs are short and write into
the test's own directory; every wait is on Slurm or the store, bounded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from svc_host import hookimpl
from svc_host.errors import ConflictError, InvalidRequestError
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.store.tables import SweepRunRecord
from svc_host.sweeps import steering
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.testing.waiting import eventually
from tests.integration.test_sweep_arrays import queued_tasks
from tests.integration.test_sweeps import counts, crash, finish, job_records, request, start, stop, workflow

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
sqlite_only = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@pytest.fixture
def svc_database_url(database_url: str) -> str:
    """The restart test runs on SQLite and PostgreSQL; the others on SQLite (the store is not what they test)."""
    return database_url


@pytest.fixture
async def orchestrator(make_host: Callable[[], Host]) -> AsyncIterator[SweepOrchestrator]:
    made = await start(make_host())
    yield made
    await stop(made)


@pytest.fixture
async def array_orchestrator(make_host: Callable[[], Host]) -> AsyncIterator[SweepOrchestrator]:
    made = await start(make_host(), arrays=True)
    yield made
    await stop(made)


async def squeue(host: Host, job_ids: list[str]) -> dict[str, tuple[str, str]]:
    """``job id -> (state, reason)`` of the jobs squeue still lists (array tasks one by one)."""
    argv = ["squeue", "--noheader", "--array", f"--jobs={','.join(job_ids)}", "--format=%i|%T|%r"]
    result = await host.transport("local").run(argv)
    if result.exit_code != 0 and "invalid job id" in result.stderr.lower():
        return {}
    assert result.exit_code == 0, result.stderr
    rows = [line.split("|") for line in result.stdout.splitlines() if line.strip()]
    return {row[0]: (row[1], row[2]) for row in rows}


async def queued_jobs(orchestrator: SweepOrchestrator, sweep_id: int) -> list[str]:
    return await orchestrator.host.store.run(steering.queued_jobs, sweep_id)


def states(host: Host) -> dict[str, str]:
    return {record.job_id: record.state for record in job_records(host)}


def first_jobs_running(orchestrator: SweepOrchestrator, sweep_id: int, cells: int) -> Callable[[], Awaitable[bool]]:
    """A check: ``cells`` CHAIN cells launched, each with its first job running and its second queued behind it
    (what a pause then holds is the second jobs only)."""

    async def check() -> bool:
        await orchestrator.host.monitor.refresh("local")
        now = list(states(orchestrator.host).values())
        queued = await queued_jobs(orchestrator, sweep_id)
        return len(now) == 2 * cells and now.count("RUNNING") == cells and len(queued) == cells

    return check


class SteerEvents:
    """An ``svc_event`` observer of sweep events: ``(from, to, paused, cells_held)``."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool, int]] = []

    @hookimpl
    def svc_event(self, event: Event) -> None:
        if event.name == "sweep_run.status_changed":
            payload = event.payload
            self.seen.append((payload["from"], payload["to"], payload["paused"], payload["cells_held"]))


CHAIN = """\
name: steer-chain
args: {x: 0}
jobs:
  - {name: first, command: "sleep 3"}
  - {name: then, command: "echo {{ x }} >> ran.txt", depends_on: [first]}
"""


@sqlite_only
async def test_pause_holds_queued_jobs_launches_nothing_and_resume_completes(
    orchestrator: SweepOrchestrator, work: Path
) -> None:
    host = orchestrator.host
    events = SteerEvents()
    host.plugins.register(events, "steer-events")
    sweep = await orchestrator.submit(request(workflow(work, CHAIN), {"x": [1, 2, 3, 4]}, max_parallel=2))
    sweep_id = sweep.id
    assert sweep_id is not None

    await eventually(
        first_jobs_running(orchestrator, sweep_id, 2), what="two cells launched, their first jobs running", interval=0.3
    )
    paused = await orchestrator.pause(sweep_id)
    assert paused.paused_at is not None
    assert paused.status == "running"
    assert (paused.cells_pending, paused.cells_held) == (2, 2)
    held = await queued_jobs(orchestrator, sweep_id)
    assert {reason for _, reason in (await squeue(host, held)).values()} == {"JobHeldUser"}
    again = await orchestrator.pause(sweep_id)  # a second pause changes nothing
    assert again.paused_at == paused.paused_at

    firsts = [job_id for job_id in states(host) if job_id not in held]

    async def firsts_ended() -> bool:
        await host.monitor.refresh("local")
        now = states(host)
        return all(now[job_id] == "COMPLETED" for job_id in firsts)

    await eventually(firsts_ended, what="the launched cells' first jobs to end", interval=0.3)
    during = await orchestrator.get(sweep_id)
    assert (during.cells_pending, during.cells_running, during.cells_held) == (2, 2, 2)
    assert len(states(host)) == 4  # no new cell launched: still the two cells' four jobs
    assert set((await squeue(host, held)).values()) == {("PENDING", "JobHeldUser")}

    resumed = await orchestrator.resume(sweep_id)
    assert (resumed.paused_at, resumed.cells_held) == (None, 0)
    done = await finish(orchestrator, sweep_id)
    assert (done.status, counts(done), done.error) == ("completed", (0, 0, 4, 0, 0), None)
    assert sorted((work / "ran.txt").read_text().split()) == ["1", "2", "3", "4"]
    with pytest.raises(ConflictError, match="already completed; nothing to pause"):
        await orchestrator.pause(sweep_id)
    assert events.seen == [  # the pause and the resume announced once each, with the held count
        ("pending", "running", False, 0),
        ("running", "running", True, 2),
        ("running", "running", False, 0),
        ("running", "completed", False, 0),
    ]


ARRAY = """\
name: steer-array
args: {x: 0}
jobs:
  - {name: nap, command: "sleep {{ x }}; echo {{ x }} >> ran.txt"}
"""


async def array_queued(orchestrator: SweepOrchestrator, sweep: SweepRunRecord, count: int) -> SweepRunRecord:
    """The sweep once its array is submitted and at least ``count`` tasks are still queued."""
    assert sweep.id is not None
    sweep_id = sweep.id

    async def submitted() -> bool:
        now = await orchestrator.get(sweep_id)
        return now.array_job_id is not None and now.cells_running == now.cell_count

    await eventually(submitted, what="the array to be submitted", interval=0.3)
    now = await orchestrator.get(sweep_id)
    assert now.array_job_id is not None
    assert len(await queued_tasks(orchestrator.host, now.array_job_id)) >= count
    return now


@sqlite_only
async def test_pausing_an_array_holds_its_pending_tasks_and_resume_completes(
    array_orchestrator: SweepOrchestrator, work: Path
) -> None:
    orchestrator = array_orchestrator
    host = orchestrator.host
    sweep = await orchestrator.submit(request(workflow(work, ARRAY), {"x": [2, 2, 1, 1, 1, 1]}, max_parallel=2))
    running = await array_queued(orchestrator, sweep, 5)
    assert running.id is not None
    array = running.array_job_id
    assert array is not None

    async def two_started() -> bool:  # a task that has not started when the pause comes is held too
        return [state for state, _ in (await squeue(host, [array])).values()].count("RUNNING") == 2

    await eventually(two_started, what="tasks 0 and 1 to start", interval=0.3)
    paused = await orchestrator.pause(running.id)
    assert paused.paused_at is not None
    assert paused.cells_held == 4

    async def first_two_done() -> bool:
        await host.monitor.refresh("local")
        return (await orchestrator.get(running.id or 0)).cells_completed == 2

    await eventually(first_two_done, what="the two running tasks to end", interval=0.3)
    left = await squeue(host, [array])
    assert sorted(left) == [f"{array}_{index}" for index in range(2, 6)]  # nothing started during the pause
    assert set(left.values()) == {("PENDING", "JobHeldUser")}
    assert (await orchestrator.get(running.id)).cells_held == 4

    await orchestrator.resume(running.id)
    done = await finish(orchestrator, running.id)
    assert (done.status, counts(done)) == ("completed", (0, 0, 6, 0, 0))
    assert (work / "ran.txt").read_text().split().count("1") == 4


@sqlite_only
async def test_cancel_while_paused_leaves_nothing_in_the_queue(
    array_orchestrator: SweepOrchestrator, work: Path
) -> None:
    orchestrator = array_orchestrator
    host = orchestrator.host
    sweep = await orchestrator.submit(request(workflow(work, ARRAY), {"x": [30, 30, 30, 30]}, max_parallel=2))
    running = await array_queued(orchestrator, sweep, 4)
    assert running.id is not None
    assert running.array_job_id is not None
    paused = await orchestrator.pause(running.id)
    assert paused.paused_at is not None
    cancelled = await orchestrator.cancel(running.id)
    assert cancelled.status == "draining"
    done = await finish(orchestrator, running.id)
    assert (done.status, counts(done), done.paused_at, done.cells_held) == ("cancelled", (0, 0, 0, 0, 4), None, 0)

    async def queue_empty() -> bool:
        return await squeue(host, [running.array_job_id or ""]) == {}

    await eventually(queue_empty, what="the array to leave the queue", interval=0.3)
    with pytest.raises(ConflictError, match="nothing to resume"):
        await orchestrator.resume(running.id)


BUDGET = """\
name: steer-budget
args: {x: 0}
jobs:
  - name: cell
    command: >-
      if [ {{ x }} -le 3 ]; then exit 1; fi;
      if [ {{ x }} -eq 4 ]; then sleep 30; exit 1; fi;
      echo {{ x }} >> ran.txt
"""


@sqlite_only
async def test_max_failures_2_stops_after_the_third_failure_and_cancels_the_rest(
    orchestrator: SweepOrchestrator, work: Path
) -> None:
    """Cells 1-4 of 8 exit 1 (cell 4 only after 30 s): cells 1-3 fail, cell 4 is cancelled while it runs and
    cells 5-8 never start."""
    host = orchestrator.host
    matrix = {"x": [1, 2, 3, 4, 5, 6, 7, 8]}
    sweep = await orchestrator.submit(request(workflow(work, BUDGET), matrix, max_parallel=2, max_failures=2))
    assert sweep.max_failures == 2
    # not cancelled, cell 4 would fail after its 30 s and the counts say so: no deadline decides it
    done = await finish(orchestrator, sweep.id, timeout=120)
    assert (done.status, counts(done)) == ("failed", (0, 0, 0, 3, 5))
    assert done.error is not None
    assert done.error.startswith(
        "stopped: 3 of 8 cells failed, more than max_failures 2; the cells left were cancelled"
    )
    assert not (work / "ran.txt").exists()
    cells = await orchestrator.cells(done.id or 0)
    errors = sorted((cell.status, cell.error or "") for cell in cells if cell.status == "cancelled")
    assert [error.split(":")[0] for _, error in errors] == ["cancelled"] + ["not started"] * 4
    assert len(job_records(host)) == 4  # cells 5-8 submitted nothing

    async def nothing_live() -> bool:
        return await squeue(host, list(states(host))) == {}

    await eventually(nothing_live, what="the cancelled cell's job to leave the queue", interval=0.3)


ARRAY_BUDGET = """\
name: steer-array-budget
args: {x: 0}
jobs:
  - {name: cell, command: "if [ {{ x }} -le 3 ]; then exit 1; fi; sleep 30"}
"""


@sqlite_only
async def test_max_failures_stops_an_array_with_one_scancel(array_orchestrator: SweepOrchestrator, work: Path) -> None:
    """Tasks 0-2 of 6 exit 1, the others would sleep 30 s: after the third failure the array is cancelled, running
    and queued tasks alike."""
    orchestrator = array_orchestrator
    host = orchestrator.host
    matrix = {"x": [1, 2, 3, 4, 5, 6]}
    sweep = await orchestrator.submit(request(workflow(work, ARRAY_BUDGET), matrix, max_parallel=2, max_failures=2))
    done = await finish(orchestrator, sweep.id, timeout=120)  # tasks not cancelled would complete after 30 s
    assert done.array_job_id is not None
    assert (done.status, counts(done)) == ("failed", (0, 0, 0, 3, 3))
    assert done.error is not None
    assert done.error.startswith("stopped: 3 of 6 cells failed, more than max_failures 2")

    async def queue_empty() -> bool:
        return await squeue(host, [done.array_job_id or ""]) == {}

    await eventually(queue_empty, what="the array to leave the queue", interval=0.3)


def test_max_failures_and_fail_fast_together_are_refused(work: Path) -> None:
    with pytest.raises(InvalidRequestError, match="give fail_fast or max_failures, not both"):
        request(workflow(work, BUDGET), {"x": [1, 2]}, fail_fast=True, max_failures=1)


async def test_a_restarted_server_keeps_the_sweep_paused(make_host: Callable[[], Host], work: Path) -> None:
    first = await start(make_host(), lease=2)
    sweep = await first.submit(request(workflow(work, CHAIN), {"x": [1, 2, 3]}, max_parallel=1))
    sweep_id = sweep.id
    assert sweep_id is not None

    await eventually(
        first_jobs_running(first, sweep_id, 1), what="the first cell launched, its first job running", interval=0.3
    )
    await first.pause(sweep_id)
    crash(first)
    await first.host.transports.close()

    second = await start(make_host(), lease=2)
    try:
        host = second.host

        async def taken_over() -> bool:
            return (await second.get(sweep_id)).owner == second.owner

        await eventually(taken_over, what="the new server to take the sweep over", interval=0.3)
        waiting = await queued_jobs(second, sweep_id)
        first_job = next(job_id for job_id in states(host) if job_id not in waiting)

        async def first_job_ended() -> bool:
            await host.monitor.refresh("local")
            return states(host)[first_job] == "COMPLETED"

        await eventually(first_job_ended, what="the launched cell's first job to end", interval=0.3)
        kept = await second.get(sweep_id)
        assert kept.paused_at is not None
        assert (kept.cells_pending, kept.cells_running, kept.cells_held) == (2, 1, 1)
        assert len(states(host)) == 2  # the new server launched nothing
        assert set((await squeue(host, await queued_jobs(second, sweep_id))).values()) == {("PENDING", "JobHeldUser")}
        await second.resume(sweep_id)
        done = await finish(second, sweep_id)
        assert (done.status, counts(done)) == ("completed", (0, 0, 3, 0, 0))
    finally:
        await stop(second)
