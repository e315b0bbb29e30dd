"""Retries by how a job ended, on the dev cluster: each end state is made to really happen.

OUT_OF_MEMORY (cgroup v1 enforces ``--mem``), TIMEOUT (slurmctld's 30 s tick), PREEMPTED (QOS ``high`` cancels
QOS ``scavenger``), plain FAILED with and without the opt-in ``retry``. NODE_FAIL downs the only node, which kills
everyone's jobs: that test carries the ``outage`` marker and runs alone.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState
from svc_host.host import Host
from svc_host.testing.plugin import HOLDS_GPUS
from svc_host.testing.waiting import eventually, wait_for_state
from svc_host.workflows.engine import WorkflowEngine
from svc_host.workflows.prepare import RunRequest
from svc_host.workflows.store import Attempt, RunSnapshot

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture
async def engine(make_host: Callable[[], Host]) -> AsyncIterator[WorkflowEngine]:
    host = make_host()
    made = WorkflowEngine(host, adopt_orphans=False)
    await made.start()
    yield made
    await made.close()
    await host.monitor.stop()
    await host.transports.close()


async def run(engine: WorkflowEngine, work: Path, text: str, timeout: float = 150) -> tuple[RunSnapshot, list[Attempt]]:
    path = work / "wf.yaml"
    path.write_text(text)
    snap = await engine.run(RunRequest(yaml_path=path), triggered_by="cli")
    done = await engine.wait(snap.run.id, timeout)
    assert done.terminal, {job.name: done.job_status(job) for job in done.jobs}
    return done, await engine.attempts(snap.run.id)


async def sacct(job_id: str, field: str) -> str:
    """``field`` of a job as accounting has it, once slurmdbd has the job's record (just after the end it may
    still print a placeholder such as ``16?`` for ReqMem)."""
    argv = ["sacct", "-j", job_id, "-X", "-n", "-P", "-o", field]
    return await eventually(
        lambda: command(*argv),
        until=lambda value: bool(value) and not value.endswith("?"),
        interval=0.5,
        what=f"{field} of job {job_id} in accounting",
    )


def shown(attempts: list[Attempt]) -> list[tuple[str, int, str, str | None]]:
    return [(a.job, a.attempt, a.record.state, a.reason) for a in attempts]


def asked(attempt: Attempt, field: str) -> str | None:
    value: str | None = json.loads(attempt.record.resources).get(field)
    return value


OOM = """\
name: oom
jobs:
  - name: hog
    command: python3 -c "x = b'1' * (400 << 20)"
    resources: {memory_per_node: 50M, time_limit: "5"}
    escalate: {memory: {factor: 10, max: 1G}}
"""


async def test_out_of_memory_escalates_to_a_memory_that_fits_and_completes(engine: WorkflowEngine, work: Path) -> None:
    done, attempts = await run(engine, work, OOM)
    assert done.run.status == "completed", done.run.error
    assert shown(attempts) == [
        ("hog", 1, "OUT_OF_MEMORY", "OUT_OF_MEMORY: memory 50M -> 500M (x10, cap 1G)"),
        ("hog", 2, "COMPLETED", None),
    ]
    assert [asked(a, "memory_per_node") for a in attempts] == ["50M", "500M"]
    assert await sacct(attempts[1].record.job_id, "ReqMem") == "500M"  # Slurm was asked for the escalated memory
    assert attempts[0].record.node_list == "localhost"


TIMEOUT = """\
name: slow
jobs:
  - name: nap
    command: "test -e napped || { touch napped; sleep 300; }"
    resources: {time_limit: "1"}
    escalate: {time: {factor: 2, max: "0:05:00"}}
"""


async def test_a_timeout_escalates_the_time_limit(engine: WorkflowEngine, work: Path) -> None:
    done, attempts = await run(engine, work, TIMEOUT, timeout=200)
    assert done.run.status == "completed", done.run.error
    assert shown(attempts) == [
        ("nap", 1, "TIMEOUT", "TIMEOUT: time 1 -> 0:02:00 (x2, cap 0:05:00)"),
        ("nap", 2, "COMPLETED", None),
    ]
    assert await sacct(attempts[0].record.job_id, "Timelimit") == "00:01:00"
    assert await sacct(attempts[1].record.job_id, "Timelimit") == "00:02:00"


FLAKY = """\
name: flaky
jobs:
  - {name: opted, command: "test -e failed-once || { touch failed-once; exit 3; }", retry: 1, retry_delay: 0}
  - {name: plain, command: "test -e plain-once || { touch plain-once; exit 3; }"}
"""


async def test_a_failure_is_retried_only_where_the_user_opted_in(engine: WorkflowEngine, work: Path) -> None:
    done, attempts = await run(engine, work, FLAKY)
    assert done.run.status == "failed"
    assert shown(attempts) == [
        ("opted", 1, "FAILED", "FAILED: retry 1 of 1"),
        ("opted", 2, "COMPLETED", None),
        ("plain", 1, "FAILED", "FAILED: not retried (no 'retry' opted in)"),
    ]
    assert [a.record.exit_code for a in attempts] == [3, 0, 3]
    assert done.run.error == "job 'plain' ended FAILED (exit code 3)"


VICTIM = """\
#!/bin/bash
#SBATCH --qos=scavenger
test -e preempted-once && exit 0
touch preempted-once
sleep 300
"""

PREEMPTIBLE = """\
name: preemptible
jobs:
  - name: victim
    script_path: victim.sh
    resources: {partition: gpu, gpus_per_node: 4, time_limit: "5"}
  - {name: after, command: "test -e preempted-once", depends_on: [victim]}
"""


@HOLDS_GPUS
async def test_a_preempted_job_is_retried_automatically(engine: WorkflowEngine, work: Path) -> None:
    (work / "victim.sh").write_text(VICTIM)
    (work / "wf.yaml").write_text(PREEMPTIBLE)
    snap = await engine.run(RunRequest(yaml_path=work / "wf.yaml"), triggered_by="cli")
    victim = snap.jobs[0].job_id
    assert victim is not None
    await wait_for_state(engine.host.transport("local"), victim, {JobState.RUNNING}, timeout=120)
    preemptor = [
        *("sbatch", "--parsable", "--qos=high", "--partition=gpu", "--gres=gpu:4", "--time=1"),
        *("--job-name=svc-test-preemptor", f"--output={work}/preemptor.out", "--wrap=sleep 3"),
    ]
    preemptor_id = await command(*preemptor)
    try:
        done = await engine.wait(snap.run.id, 150)
    finally:
        await command("scancel", preemptor_id)
    attempts = await engine.attempts(snap.run.id)
    assert done.run.status == "completed", done.run.error
    assert shown(attempts)[:2] == [
        ("victim", 1, "PREEMPTED", "PREEMPTED: retried automatically, 1 of 2"),
        ("victim", 2, "COMPLETED", None),
    ]
    assert await sacct(victim, "State") == "PREEMPTED"
    assert await sacct(victim, "QOS") == "scavenger"
    # the afterok child went to Slurm on the first attempt and followed the retry
    after = [a for a in attempts if a.job == "after"]
    assert after[-1].record.state == "COMPLETED"


NODE_DOWN = """\
name: node-down
jobs:
  - name: survivor
    command: "test -e interrupted-once || { touch interrupted-once; sleep 300; }"
    resources: {time_limit: "5"}
"""


async def scontrol_node(*words: str, check: bool = True) -> None:
    argv = ["scontrol", "update", "nodename=localhost", *words]
    process = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL)
    if await process.wait() != 0 and check:
        raise AssertionError(f"{' '.join(argv)} failed")


async def command(*argv: str) -> str:
    process = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    assert process.returncode == 0, argv
    return out.decode().strip()


@pytest.mark.outage
async def test_a_node_failure_is_retried_automatically(engine: WorkflowEngine, work: Path) -> None:
    (work / "wf.yaml").write_text(NODE_DOWN)
    snap = await engine.run(RunRequest(yaml_path=work / "wf.yaml"), triggered_by="cli")
    first = snap.jobs[0].job_id
    assert first is not None
    await wait_for_state(engine.host.transport("local"), first, {JobState.RUNNING}, timeout=120)
    try:
        await scontrol_node("state=down", "reason=svc-test")
        await wait_for_state(engine.host.transport("local"), first, {JobState.NODE_FAIL}, timeout=60)
        await eventually(  # the engine sees the end on a monitor tick and submits the next attempt
            lambda: engine.get(snap.run.id),
            until=lambda now: now.jobs[0].attempt >= 2 and now.jobs[0].job_id != first,
            interval=0.5,
            what="a second attempt",
        )
    finally:  # the dev cluster's ReturnToService=2 may have brought the node back already: then resume is refused
        await scontrol_node("state=resume", check=False)
    done = await engine.wait(snap.run.id, 150)
    attempts = await engine.attempts(snap.run.id)
    assert done.run.status == "completed", done.run.error
    assert shown(attempts) == [
        ("survivor", 1, "NODE_FAIL", "NODE_FAIL: retried automatically, 1 of 2"),
        ("survivor", 2, "COMPLETED", None),
    ]
    assert attempts[0].record.node_list == "localhost"
