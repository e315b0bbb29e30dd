"""Uniform sweeps as one Slurm job array on the dev cluster (``local`` transport): one sbatch for the sweep, and
cells that still count, cancel and fail one by one. Jobs are short and write into the test's own directory."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from svc_host.domain.submission import RenderedScript
from svc_host.host import Host
from svc_host.slurm.arrays import task_ids
from svc_host.store import jobs as job_repo
from svc_host.sweeps.cells import SweepRequest
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.testing.waiting import eventually
from svc_host.workflows.prepare import RunRequest
from svc_host.workflows.store import snapshot
from tests.integration.test_sweeps import counts, crash, finish, job_records, request, start, stop, workflow

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture
async def orchestrator(make_host: Callable[[], Host]) -> AsyncIterator[SweepOrchestrator]:
    made = await start(make_host(), arrays=True)
    yield made
    await stop(made)


@pytest.fixture
def sbatches(orchestrator: SweepOrchestrator, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scripts given to sbatch through the local transport (each still submitted for real)."""
    transport = orchestrator.host.transport("local")
    real = transport.submit
    seen: list[str] = []

    async def submit(script: RenderedScript) -> str:
        seen.append(script.text)
        return await real(script)

    monkeypatch.setattr(transport, "submit", submit)
    return seen


async def queued_tasks(host: Host, array_job_id: str) -> list[str]:
    """The array's tasks squeue still lists (pending ranges such as ``123_[3-5%2]`` read as their tasks)."""
    result = await host.transport("local").run(["squeue", "--noheader", f"--jobs={array_job_id}", "--format=%i|%T"])
    if result.exit_code != 0 and "invalid job id" in result.stderr.lower():
        return []
    assert result.exit_code == 0, result.stderr
    return [task for line in result.stdout.split() for task in task_ids(line.split("|")[0])]


UNIFORM = """\
name: uniform
args: {lr: 0, seed: 0}
jobs:
  - name: train
    command: "echo lr={{ lr }} seed={{ seed }} task=$SLURM_ARRAY_TASK_ID > out-{{ lr }}-{{ seed }}.txt"
"""


async def test_a_6_cell_uniform_sweep_is_one_array(
    orchestrator: SweepOrchestrator, sbatches: list[str], work: Path
) -> None:
    host = orchestrator.host
    matrix = {"lr": [0.1, 0.01], "seed": [1, 2, 3]}
    sweep = await orchestrator.submit(request(workflow(work, UNIFORM), matrix, max_parallel=2))
    done = await finish(orchestrator, sweep.id)
    assert (done.status, counts(done), done.error) == ("completed", (0, 0, 6, 0, 0), None)
    assert len(sbatches) == 1
    assert "#SBATCH --array=0-5%2" in sbatches[0]
    array_job_id = done.array_job_id
    assert array_job_id is not None
    assert array_job_id.isdigit()
    records = {record.job_id: record for record in job_records(host)}
    assert sorted(records) == sorted(f"{array_job_id}_{index}" for index in range(6))
    assert {record.state for record in records.values()} == {"COMPLETED"}
    cells = sorted(await orchestrator.cells(done.id or 0), key=lambda cell: cell.started_at)
    for index, cell in enumerate(cells):  # matrix order: task i is cell i, with its own args, job and logs
        snap = host.store.call(snapshot, cell.id)
        assert snap is not None
        [job] = snap.jobs
        record = snap.record_of(job)
        assert (job.job_id, record.job_id if record else None) == (f"{array_job_id}_{index}",) * 2
        assert record is not None
        assert record.stdout_path is not None
        assert record.stdout_path.endswith(f"-{array_job_id}_{index}.out")
        assert Path(record.stdout_path).exists()
    assert (work / "out-0.1-2.txt").read_text() == "lr=0.1 seed=2 task=1\n"
    assert (work / "out-0.01-3.txt").read_text() == "lr=0.01 seed=3 task=5\n"


SLOW = """\
name: slow-uniform
args: {x: 0}
jobs:
  - {name: nap, command: "sleep 60"}
"""


async def test_cancel_mid_way_cancels_the_array_and_leaves_no_task(
    orchestrator: SweepOrchestrator, sbatches: list[str], work: Path
) -> None:
    host = orchestrator.host
    sweep = await orchestrator.submit(request(workflow(work, SLOW), {"x": list(range(6))}, max_parallel=2))
    assert sweep.id is not None
    sweep_id = sweep.id
    running = await eventually(
        lambda: orchestrator.get(sweep_id),
        until=lambda running: running.array_job_id is not None and running.cells_running == 6,
        interval=0.2,
        what="the array's id and 6 cells running",
    )
    array_job_id = running.array_job_id
    assert array_job_id is not None
    assert len(await queued_tasks(host, array_job_id)) == 6
    cancelled = await orchestrator.cancel(sweep.id)
    assert cancelled.status == "draining"
    done = await finish(orchestrator, sweep.id)
    assert (done.status, counts(done)) == ("cancelled", (0, 0, 0, 0, 6))
    assert len(sbatches) == 1
    await eventually(  # scancel returns before slurmctld has removed the tasks
        lambda: queued_tasks(host, array_job_id),
        until=lambda left: left == [],
        interval=0.5,
        what="no task of the array left in the queue",
    )

    def record_states() -> set[str]:
        return {record.state for record in job_records(host)}

    await eventually(  # the running tasks' end is seen by the monitor; the queued ones read cancelled at once
        record_states,
        until=lambda states: states == {"CANCELLED"},
        interval=0.5,
        what="every task's record cancelled",
    )


FAILING = """\
name: failing-uniform
args: {x: 0}
jobs:
  - {name: step, command: "test {{ x }} -ne 0 && sleep 8 && touch done-{{ x }}"}
"""


async def test_fail_fast_cancels_the_tasks_not_started(
    orchestrator: SweepOrchestrator, sbatches: list[str], work: Path
) -> None:
    spec = {"fail_fast": True, "max_parallel": 2}
    sweep = await orchestrator.submit(request(workflow(work, FAILING), {"x": [0, 1, 2, 3, 4, 5]}, **spec))
    done = await finish(orchestrator, sweep.id)
    assert len(sbatches) == 1
    assert done.status == "failed"
    assert done.cancel_requested_at is None
    assert done.error is not None
    assert done.error.startswith("1 of 6 cells failed; first: cell ")
    assert "job 'step' ended FAILED" in done.error
    # x=0 fails at once and holds the array before its slot frees: x=2..5 never start (as with one sbatch per cell).
    # x=1 (max_parallel 2) runs to its end when Slurm started it with x=0; on a busy machine the scheduler may start
    # one task per pass, and then x=1 was still queued when x=0 failed and never starts either
    cells = await orchestrator.cells(done.id or 0)
    x1_ran = any(cell.status == "completed" for cell in cells)
    assert counts(done) == ((0, 0, 1, 1, 4) if x1_ran else (0, 0, 0, 1, 5))
    assert sorted(path.name for path in work.glob("done-*")) == (["done-1"] if x1_ran else [])
    stopped = [cell for cell in cells if cell.status == "cancelled"]
    assert {cell.error for cell in stopped} == {"not started: fail_fast stopped the sweep after a cell failed"}
    assert done.array_job_id is not None
    assert await queued_tasks(orchestrator.host, done.array_job_id) == []
    states = sorted(record.state for record in job_records(orchestrator.host))
    assert states == ["CANCELLED"] * len(stopped) + ["COMPLETED"] * x1_ran + ["FAILED"]  # never started: cancelled


MIXED = """\
name: mixed
args: {minutes: 1}
jobs:
  - name: fit
    command: "echo {{ minutes }}"
    resources: {time_limit: "00:0{{ minutes }}:00"}
"""


async def test_cells_with_differing_resources_are_submitted_one_by_one(
    orchestrator: SweepOrchestrator, sbatches: list[str], work: Path
) -> None:
    sweep = await orchestrator.submit(request(workflow(work, MIXED), {"minutes": [1, 2]}))
    done = await finish(orchestrator, sweep.id)
    assert (done.status, counts(done), done.array_job_id) == ("completed", (0, 0, 2, 0, 0), None)
    assert len(sbatches) == 2
    assert not any("--array" in script for script in sbatches)
    assert all(record.job_id.isdigit() for record in job_records(orchestrator.host))


RESTART = """\
name: restart-uniform
args: {x: 0}
jobs:
  - {name: cell, command: "sleep 2; echo {{ x }} >> ran.txt"}
"""


async def test_killed_after_the_array_was_accepted_every_cell_adopts_its_task(
    make_host: Callable[[], Host], work: Path
) -> None:
    """Killed right after sbatch accepted the array, before any task id was stored: the new server finds the array
    by its marker, each cell adopts its own task, and no cell is submitted again."""
    first = await start(make_host(), lease=2, arrays=True)
    local = first.host.transport("local")
    real_submit = local.submit
    submitted: list[str] = []
    hung = asyncio.Event()

    async def submit(script: Any) -> str:
        submitted.append(await real_submit(script))
        hung.set()
        await asyncio.Event().wait()  # killed here
        raise AssertionError("unreachable")

    local.submit = submit  # type: ignore[method-assign]
    sweep = await first.submit(request(workflow(work, RESTART), {"x": [0, 1, 2, 3]}, max_parallel=2))
    await asyncio.wait_for(hung.wait(), 60)
    crash(first)
    await first.host.transports.close()

    second = await start(make_host(), lease=2, arrays=True)
    try:
        done = await finish(second, sweep.id, timeout=90)
        assert (done.status, counts(done)) == ("completed", (0, 0, 4, 0, 0))
        assert sorted((work / "ran.txt").read_text().split()) == ["0", "1", "2", "3"]  # each cell ran once
        assert len(submitted) == 1
        assert done.array_job_id == submitted[0]  # the sweep knows its array again (a cancel is one scancel)
        assert sorted(record.job_id for record in job_records(second.host)) == [f"{submitted[0]}_{i}" for i in range(4)]
        for cell in await second.cells(done.id or 0):  # each cell adopted the task of its own args
            snap = second.host.store.call(snapshot, cell.id)
            assert snap is not None
            assert snap.jobs[0].job_id == f"{submitted[0]}_{json.loads(cell.args)['x']}"
    finally:
        await stop(second)


async def test_a_submission_that_raises_fails_every_cell_with_the_reason(
    orchestrator: SweepOrchestrator, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def submit(script: RenderedScript) -> str:
        raise RuntimeError("the plugin tripped over itself")

    monkeypatch.setattr(orchestrator.host.transport("local"), "submit", submit)
    sweep = await orchestrator.submit(request(workflow(work, UNIFORM), {"lr": [1, 2], "seed": [3]}))
    done = await finish(orchestrator, sweep.id, timeout=30)
    assert (done.status, counts(done), done.array_job_id) == ("failed", (0, 0, 0, 2, 0), None)
    cells = await orchestrator.cells(done.id or 0)
    assert {cell.error for cell in cells} == {"launch failed: RuntimeError: the plugin tripped over itself"}
    assert job_records(orchestrator.host) == []


async def test_over_ssh_a_uniform_sweep_is_one_array_with_its_logs_on_the_cluster(dev_host: Host) -> None:
    orchestrator = await start(dev_host, arrays=True)
    remote = f"/tmp/svc-array-{uuid.uuid4().hex[:8]}"
    job = f"{{name: cell, command: 'echo x={{{{ x }}}}', work_dir: {remote}}}"
    text = f"name: ssh-array\nargs: {{x: 0}}\njobs:\n  - {job}\n"
    path = workflow(Path.cwd(), text)
    try:
        run = RunRequest(yaml_path=path, transport="dev")
        spec = parse_sweep({"matrix": {"x": ["a", "b c"]}, "max_parallel": 2})
        sweep = await orchestrator.submit(SweepRequest(run=run, spec=spec, source="mcp"))
        done = await finish(orchestrator, sweep.id, timeout=120)
        assert (done.status, counts(done)) == ("completed", (0, 0, 2, 0, 0))
        assert done.array_job_id is not None
        cells = sorted(await orchestrator.cells(done.id or 0), key=lambda cell: cell.started_at)
        for index, (cell, value) in enumerate(zip(cells, ["a", "b c"], strict=True)):
            snap = dev_host.store.call(snapshot, cell.id)
            assert snap is not None
            record = snap.record_of(snap.jobs[0])
            assert record is not None
            assert record.job_id == f"{done.array_job_id}_{index}"
            assert record.stdout_path == f"{remote}/logs/cell-{done.array_job_id}_{index}.out"
            log = await dev_host.transport("dev").read_log(record.stdout_path)
            assert log.content == f"x={value}\n"  # the value reached the command as in a plain run
    finally:
        await dev_host.transport("dev").check(["rm", "-rf", "--", remote])  # type: ignore[attr-defined]
        live = [record.job_id for record in dev_host.store.call(job_repo.live_jobs)]
        if live:
            await dev_host.transport("dev").cancel(live)
        await stop(orchestrator)
