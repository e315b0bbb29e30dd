"""Scheduler load that does not grow with the number of clients: single flight and ~1 s snapshots."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.submission import RenderedScript
from svc_host.errors import TransportError
from svc_host.plugin_core.manager import PluginManager
from svc_host.runtime.monitor import Monitor
from svc_host.runtime.snapshots import SchedulerSnapshots
from svc_host.runtime.transport_registry import TransportRegistry
from svc_host.store import jobs as repo
from svc_host.store.database import Store
from svc_host.testing.fake import FakeTransport, transport_plugin
from svc_host.testing.waiting import DEADLINE, eventually
from svc_host.transports.base import CommandResult, SlurmTransport
from tests.conftest import LoopClock

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"


class SlowSqueue(SlurmTransport):
    """A Slurm transport whose every command takes ``delay`` seconds and prints recorded squeue output."""

    name = "slow"

    def __init__(self, *, delay: float = 0.05, exit_code: int = 0) -> None:
        self.delay = delay
        self.exit_code = exit_code
        self.calls: list[list[str]] = []

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        self.calls.append(list(argv))
        await asyncio.sleep(self.delay)
        recorded = "sinfo_gpu.txt" if argv[0] == "sinfo" else "squeue_jobs.txt"
        return CommandResult(list(argv), self.exit_code, (FIXTURES / recorded).read_text(), "boom")

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport("fake")


@pytest.fixture
def registry(svc_plugin_manager: PluginManager, fake: FakeTransport) -> TransportRegistry:
    svc_plugin_manager.register(transport_plugin(fake), "fake-plugin")
    return TransportRegistry(svc_plugin_manager)


async def submit(fake: FakeTransport) -> str:
    return await fake.submit(RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e"))


async def test_twenty_concurrent_identical_queries_run_one_command(fake: FakeTransport) -> None:
    snapshots = SchedulerSnapshots(lambda name: fake)
    job_id = await submit(fake)
    fake.calls.clear()
    # max_age 0: nothing cached may answer, so only sharing the running query keeps this at one command
    answers = await asyncio.gather(*(snapshots.queue("fake", max_age=0) for _ in range(20)))
    assert fake.calls == ["queue"]
    assert all([job.job_id for job in answer.value] == [job_id] for answer in answers)
    await snapshots.queue("fake", max_age=0)  # the query ended: the next caller asks again
    assert fake.calls == ["queue", "queue"]


async def test_a_snapshot_serves_until_it_is_older_than_max_age(fake: FakeTransport, loop_clock: LoopClock) -> None:
    snapshots = SchedulerSnapshots(lambda name: fake, max_age=60)
    first = await submit(fake)
    fake.calls.clear()
    before = await snapshots.queue("fake")
    second = await submit(fake)
    cached = await snapshots.queue("fake")
    assert [job.job_id for job in cached.value] == [first]  # up to max_age old: the new job is not there yet
    assert 0 <= cached.age <= 60
    loop_clock.advance(61)
    fresh = await snapshots.queue("fake")
    assert [job.job_id for job in fresh.value] == [first, second]
    assert fresh.age < before.age
    assert fake.calls == ["queue", "submit", "queue"]


async def test_queries_differ_per_transport_and_per_question(fake: FakeTransport) -> None:
    other = FakeTransport("other")
    snapshots = SchedulerSnapshots({"fake": fake, "other": other}.__getitem__)
    await asyncio.gather(
        snapshots.queue("fake"),
        snapshots.queue("other"),
        snapshots.resources("fake"),
        snapshots.resources("fake", "gpu"),
        snapshots.resources("fake", "gpu"),
    )
    assert sorted(fake.calls) == ["queue", "resources", "resources"]
    assert other.calls == ["queue"]


async def test_cleared_snapshots_are_asked_again(fake: FakeTransport) -> None:
    snapshots = SchedulerSnapshots(lambda name: fake)
    await snapshots.queue("fake")
    snapshots.clear()
    await snapshots.queue("fake")
    assert fake.calls == ["queue", "queue"]


async def test_concurrent_identical_commands_on_a_slurm_transport_run_once() -> None:
    transport = SlowSqueue()
    queues = await asyncio.gather(*(transport.queue() for _ in range(20)))
    assert [call[0] for call in transport.calls] == ["squeue"]
    assert queues[0]
    assert all(queue == queues[0] for queue in queues)
    await asyncio.gather(transport.queue(), transport.queue(user="alice"))  # another question, another command
    assert [call[0] for call in transport.calls] == ["squeue", "squeue", "squeue"]


async def test_a_shared_failure_reaches_every_caller_and_is_not_kept() -> None:
    transport = SlowSqueue(exit_code=1)
    results = await asyncio.gather(*(transport.queue() for _ in range(5)), return_exceptions=True)
    assert len(transport.calls) == 1
    assert all(isinstance(result, TransportError) and result.stderr_tail == "boom" for result in results)
    transport.exit_code = 0
    assert await transport.queue()
    assert len(transport.calls) == 2


async def test_a_caller_giving_up_does_not_cancel_the_others() -> None:
    transport = SlowSqueue(delay=0.1)
    impatient = asyncio.ensure_future(transport.queue())
    patient = asyncio.ensure_future(transport.queue())
    await eventually(lambda: transport.calls, what="the shared squeue's start")
    impatient.cancel()
    assert await patient
    assert impatient.cancelled()
    assert len(transport.calls) == 1


async def test_closing_the_transport_stops_a_shared_query_nobody_waits_for() -> None:
    transport = SlowSqueue(delay=30)
    gone = asyncio.ensure_future(transport.queue())
    await eventually(lambda: transport.calls, what="the shared squeue's start")
    gone.cancel()  # the query goes on for the callers that may join it...
    await asyncio.wait_for(transport.close(), DEADLINE)  # ...until the transport closes: nothing is left running
    assert [task for task in asyncio.all_tasks() if task is not asyncio.current_task()] == []
    transport.delay = 0
    assert await transport.queue()  # and the transport works again
    assert len(transport.calls) == 2


async def test_a_caller_still_waiting_when_the_transport_closes_gets_an_error_not_a_cancel() -> None:
    """A profile whose connection settings change is closed while a request may wait on its query: that request
    answers with an error in svc's shape instead of being dropped as if it had been cancelled."""
    transport = SlowSqueue(delay=30)
    waiting = asyncio.ensure_future(transport.queue())
    await eventually(lambda: transport.calls, what="the shared squeue's start")
    await transport.close()
    with pytest.raises(TransportError, match=r"^the query was stopped: its transport closed while it ran$"):
        await waiting


async def test_submissions_are_never_shared() -> None:
    transport = SlowSqueue()
    script = RenderedScript(text="#!/bin/bash\ntrue\n", log_dir="logs", stdout_path="o", stderr_path="e")
    transport.run = _sbatch_answers(transport)  # type: ignore[method-assign]
    ids = await asyncio.gather(transport.submit(script), transport.submit(script))
    assert sorted(ids) == ["1", "2"]
    assert [call[0] for call in transport.calls] == ["mkdir", "sbatch", "sbatch"]  # one shared mkdir -p


def _sbatch_answers(transport: SlowSqueue) -> Callable[..., Awaitable[CommandResult]]:
    async def run(argv: Sequence[str], **kwargs: object) -> CommandResult:
        transport.calls.append(list(argv))
        job_id = sum(call[0] == "sbatch" for call in transport.calls)
        await asyncio.sleep(0.02)
        return CommandResult(list(argv), 0, f"{job_id}\n", "")

    return run


async def test_the_monitor_tick_refreshes_the_queue_snapshot_lists_read(
    registry: TransportRegistry, fake: FakeTransport, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'svc.db'}")
    monitor = Monitor(store, registry, lambda event: None)
    job_id = await submit(fake)
    store.call(repo.add_job, transport="fake", job_id=job_id, name="j", source="cli", resources={}, command=[])
    fake.set_state(job_id, JobState.RUNNING)
    fake.calls.clear()
    await monitor.tick("fake")
    listed = await registry.snapshots.queue("fake")  # what GET /api/jobs serves next: no command of its own
    assert fake.calls == ["queue"]
    assert [(job.job_id, job.state) for job in listed.value] == [(job_id, JobState.RUNNING)]
    await registry.close()
    await registry.snapshots.queue("fake")  # rebuilt transports start from a fresh answer
    assert fake.calls == ["queue", "queue"]


async def test_readers_of_one_snapshot_share_what_is_built_from_it(fake: FakeTransport) -> None:
    snapshots = SchedulerSnapshots(lambda name: fake)
    await submit(fake)
    builds: list[int] = []

    async def encode(jobs: list[JobStatus]) -> str:
        builds.append(len(jobs))
        await asyncio.sleep(0.01)
        if len(builds) == 1:
            raise RuntimeError("the store is busy")
        return ",".join(job.job_id for job in jobs)

    queue = await snapshots.queue("fake")
    with pytest.raises(RuntimeError):
        await queue.derive("list", encode)
    bodies = await asyncio.gather(*(queue.derive("list", encode) for _ in range(20)))  # the failure was not kept
    assert bodies == ["1000"] * 20
    assert builds == [1, 1]
    fresh = await snapshots.queue("fake", max_age=0)
    assert await fresh.derive("list", encode) == "1000"  # a new snapshot builds anew
    assert builds == [1, 1, 1]


async def test_resources_take_the_running_jobs_from_the_queue_snapshot() -> None:
    transport = SlowSqueue()
    snapshots = SchedulerSnapshots(lambda name: transport)
    await snapshots.queue("slow")  # what the monitor's tick or GET /api/jobs just asked
    found = await snapshots.resources("slow")
    assert [call[0] for call in transport.calls] == ["squeue", "sinfo"]
    asked = await transport.resources()  # the same figures as asking both itself
    assert [snap.model_dump(exclude={"timestamp"}) for snap in found.value] == [
        snap.model_dump(exclude={"timestamp"}) for snap in asked
    ]
    assert found.value[0].jobs_running == 1


async def test_one_job_answers_serve_a_second_and_do_not_pile_up(fake: FakeTransport, loop_clock: LoopClock) -> None:
    snapshots = SchedulerSnapshots(lambda name: fake, max_age=60)
    ids = [await submit(fake) for _ in range(3)]
    fake.calls.clear()
    for job_id in ids:
        assert (await snapshots.job("fake", job_id)).value is not None
    assert (await snapshots.job("fake", ids[0])).value is not None  # within max_age: kept, no new query
    assert fake.calls == ["statuses"] * 3
    loop_clock.advance(61)
    assert (await snapshots.job("fake", ids[0])).value is not None  # expired: asked again
    assert fake.calls == ["statuses"] * 4
    # a server polling many jobs keeps the answers of the last max_age only
    assert [key for key in snapshots._latest if key[0] == "job"] == [("job", "fake", ids[0])]
