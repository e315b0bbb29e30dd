"""A client sees its own submit or cancel in the next list, although lists read shared ~1 s snapshots."""

from __future__ import annotations

import asyncio

from svc_host.domain.jobs import JobStatus
from svc_host.domain.submission import RenderedScript
from svc_host.runtime.snapshots import SchedulerSnapshots
from svc_host.testing.fake import FakeTransport
from svc_host.testing.waiting import eventually

SCRIPT = RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e")


class SlowQueue(FakeTransport):
    """A queue that answers what it held when asked, a moment later (a squeue in flight)."""

    async def queue(self, *, user: str | None = None) -> list[JobStatus]:
        held = await super().queue(user=user)
        await asyncio.sleep(0.05)
        return held


def ids(jobs: list[JobStatus]) -> set[str]:
    return {job.job_id for job in jobs}


async def test_a_query_started_before_a_change_serves_no_later_reader() -> None:
    fake = SlowQueue()
    snapshots = SchedulerSnapshots(lambda name: fake, max_age=60)  # nothing expires while the test runs
    kept = await snapshots.queue("fake")
    early = asyncio.ensure_future(snapshots.queue("fake", max_age=0))  # in flight when the job is submitted
    await eventually(lambda: fake.calls.count("queue") == 2, what="the early query reading the queue")
    job_id = await fake.submit(SCRIPT)
    snapshots.changed("fake")

    later = await snapshots.queue("fake")  # within max_age of ``kept``, yet a new query

    assert job_id in ids(later.value)
    assert job_id not in ids((await early).value)
    assert job_id not in ids(kept.value)
    assert await snapshots.queue("fake") is later  # the answer after the change is the one kept
    assert fake.calls.count("queue") == 3


async def test_a_change_on_one_transport_keeps_the_others_snapshots() -> None:
    one, two = FakeTransport("one"), FakeTransport("two")
    snapshots = SchedulerSnapshots(lambda name: one if name == "one" else two)
    first_one, first_two = await snapshots.queue("one"), await snapshots.queue("two")
    snapshots.changed("one")
    assert await snapshots.queue("two") is first_two
    assert await snapshots.queue("one") is not first_one
