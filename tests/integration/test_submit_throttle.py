"""The submission throttle on the dev cluster: a QOS of our own with ``MaxSubmitJobsPerUser=3`` that a workflow of
8 jobs and a sweep of 8 cells share, and an array sweep cut to the budget. sbatch never refuses a job, and no
sample of the queue holds more than 3 jobs of that QOS."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from svc_host import hookimpl
from svc_host.domain.submission import JobDefinition, RenderedScript
from svc_host.host import Host
from svc_host.plugin_core.records import RendererSpec
from svc_host.rendering.sbatch import render_sbatch
from svc_host.services.limits import limits_view
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.testing.waiting import eventually
from svc_host.workflows.prepare import RunRequest
from svc_host.workflows.store import sweep_place
from svc_host.workflows.submission import with_directive
from tests.integration.test_sweeps import counts, finish, request, start, stop
from tests.site_qos import own_qos

# one worker runs them all in turn (make test: --dist loadgroup): they share the QOS and its budget
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.xdist_group("svc-throttle-qos")]

QOS = "svc_throttle_test"
"""Created, granted to root (the ``local`` transport's user) and removed by the ``qos`` fixture."""


@pytest.fixture
def qos(slurm_cluster: None) -> Iterator[str]:
    with own_qos(QOS, "MaxSubmitJobsPerUser=3") as made:
        yield made


@pytest.fixture
async def orchestrator(make_host: Callable[[], Host], qos: str) -> AsyncIterator[SweepOrchestrator]:
    """Uniform sweeps as job arrays, others cell by cell; the renderer ``throttled`` puts every job in the QOS."""
    host = make_host()
    render: Callable[[JobDefinition], RenderedScript] = lambda d: with_directive(render_sbatch(d), "qos", qos)  # noqa: E731
    plugin = SimpleNamespace(svc_renderers=hookimpl(lambda: [RendererSpec(name="throttled", render=render)]))
    host.plugins.register(plugin, "throttled-renderer")
    made = await start(host, arrays=True)
    yield made
    await stop(made)


@pytest.fixture
def refusals(orchestrator: SweepOrchestrator, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What sbatch refused (every script still goes to the real sbatch)."""
    transport = orchestrator.host.transport("local")
    real = transport.submit
    refused: list[str] = []

    async def submit(script: RenderedScript) -> str:
        try:
            return await real(script)
        except Exception as exc:
            refused.append(str(exc))
            raise

    monkeypatch.setattr(transport, "submit", submit)
    return refused


@contextlib.asynccontextmanager
async def queue_samples() -> AsyncIterator[list[int]]:
    """How many jobs (array tasks each one) of the QOS squeue lists, sampled every 0.2 s."""
    samples: list[int] = []

    async def sample() -> None:
        while True:
            process = await asyncio.create_subprocess_exec(
                "squeue", "--noheader", "--array", f"--qos={QOS}", "--format=%i", stdout=subprocess.PIPE
            )
            out, _ = await process.communicate()
            samples.append(len(out.split()))
            await asyncio.sleep(0.2)

    task = asyncio.create_task(sample())
    try:
        yield samples
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


EIGHT = "name: eight\nrenderer: throttled\njobs:\n" + "".join(
    f"  - {{name: j{i}, command: 'sleep 1; echo {i} > wf-{i}.txt'}}\n" for i in range(8)
)
CELLS = """\
name: cells
renderer: throttled
args: {i: 0}
jobs:
  - {name: cell, command: "sleep 1; echo {{ i }} > cell-{{ i }}.txt"}
"""
MIXED = """\
name: mixed
renderer: throttled
args: {i: 0}
jobs:
  - {name: "cell{{ i }}", command: "sleep 1; echo {{ i }} > mixed-{{ i }}.txt"}
"""


async def test_a_workflow_and_a_sweep_share_a_budget_of_three(
    orchestrator: SweepOrchestrator, refusals: list[str], work: Path
) -> None:
    engine = orchestrator.engine
    (work / "eight.yaml").write_text(EIGHT)
    (work / "mixed.yaml").write_text(MIXED)
    async with queue_samples() as samples:
        run = await engine.run(RunRequest(yaml_path=work / "eight.yaml"), triggered_by="cli")
        sweep = await orchestrator.submit(request(work / "mixed.yaml", {"i": list(range(8))}, max_parallel=8))
        reason = f"queued: MaxSubmitJobsPerUser 3 of QOS {QOS} reached (3 in queue)"
        throttle = orchestrator.host.submit_throttle
        await eventually(
            lambda: reason in (throttle.reason(run.run.id), throttle.reason(f"sweep:{sweep.id}")),
            what="the run or the sweep queued by the QOS limit",
        )
        done_run = await engine.wait(run.run.id, timeout=240)
        done_sweep = await finish(orchestrator, sweep.id, timeout=240)
    assert refusals == []
    assert done_run.run.status == "completed", done_run.run.error
    assert (done_sweep.status, counts(done_sweep)) == ("completed", (0, 0, 8, 0, 0))
    assert sorted((work / f"wf-{i}.txt").read_text() for i in range(8)) == [f"{i}\n" for i in range(8)]
    assert sorted((work / f"mixed-{i}.txt").read_text() for i in range(8)) == [f"{i}\n" for i in range(8)]
    assert max(samples) == 3, samples


async def test_an_array_sweep_larger_than_the_budget_starts_as_an_array_of_three(
    orchestrator: SweepOrchestrator, refusals: list[str], work: Path
) -> None:
    (work / "cells.yaml").write_text(CELLS)
    async with queue_samples() as samples:
        sweep = await orchestrator.submit(request(work / "cells.yaml", {"i": list(range(8))}, max_parallel=8))
        done = await finish(orchestrator, sweep.id, timeout=240)
    assert refusals == []
    assert (done.status, counts(done)) == ("completed", (0, 0, 8, 0, 0))
    assert max(samples) == 3, samples
    assert done.id is not None
    tasks = {}
    for cell in await orchestrator.cells(done.id):
        index, _ = await orchestrator.host.store.run(sweep_place, cell.id)
        tasks[index] = (await orchestrator.engine.get(cell.id)).jobs[0].job_id
    assert [tasks[index] for index in range(3)] == [f"{done.array_job_id}_{index}" for index in range(3)]
    assert all("_" not in str(tasks[index]) for index in range(3, 8)), tasks  # then cell by cell
    assert sorted((work / f"cell-{i}.txt").read_text() for i in range(8)) == [f"{i}\n" for i in range(8)]


async def test_limits_are_read_over_ssh_as_the_profiles_user(dev_host: Host, qos: str) -> None:
    view = await limits_view(dev_host, "dev")
    assert (view["user"], view["cluster"], view["max_array_size"]) == ("svcdev", "svcdev", 1001)
    assert {
        "name": qos,
        "max_submit_jobs_per_user": 3,
        "max_jobs_per_user": None,
        "grp_submit_jobs": None,
        "grp_jobs": None,
    } in view["qos"]
    await dev_host.transports.close()


@pytest.fixture
def hand_jobs(qos: str) -> Iterator[list[str]]:
    """Three 4-second jobs submitted by hand in the QOS, filling its budget (cancelled afterwards)."""
    argv = ["sbatch", "--parsable", f"--qos={qos}", "-o", "/dev/null", "--wrap", "sleep 4"]
    ids = [
        subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout.strip() for _ in range(3)
    ]
    try:
        yield ids
    finally:
        subprocess.run(["scancel", *ids], check=False, timeout=60)


async def test_a_refusal_for_jobs_svc_did_not_count_holds_the_job_until_they_end(
    orchestrator: SweepOrchestrator, hand_jobs: list[str], work: Path
) -> None:
    """Jobs submitted by hand in the QOS are counted in the user's default QOS (squeue does not say): sbatch refuses
    svc's job, which then waits like one that did not fit, and runs once they end."""
    (work / "one.yaml").write_text(
        "name: one\nrenderer: throttled\njobs:\n  - {name: only, command: 'echo ran > one.txt'}\n"
    )
    run = await orchestrator.engine.run(RunRequest(yaml_path=work / "one.yaml"), triggered_by="cli")
    assert run.job_status(run.jobs[0]) == "WAITING"
    assert orchestrator.host.submit_throttle.reason(run.run.id) == (
        "queued: sbatch refused it (QOSMaxSubmitJobPerUserLimit); trying again as jobs end"
    )
    done = await orchestrator.engine.wait(run.run.id, timeout=120)
    assert (done.run.status, done.jobs[0].attempt, (work / "one.txt").read_text()) == ("completed", 1, "ran\n")
