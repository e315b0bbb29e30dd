"""The monitor: one batched query per tick, transitions and events, backoff, restarts."""

from __future__ import annotations

import asyncio

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.errors import TransportError
from svc_host.plugin_core.records import Event
from svc_host.runtime.monitor import Monitor
from svc_host.store import jobs as repo
from svc_host.store.database import Store
from svc_host.testing.fake import FakeTransport
from svc_host.testing.waiting import DEADLINE, eventually
from tests.conftest import LoopClock


async def track(fake: FakeTransport, store: Store, count: int) -> list[str]:
    from svc_host.domain.submission import RenderedScript

    ids = []
    for _ in range(count):
        job_id = await fake.submit(RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e"))
        store.call(
            repo.add_job, transport="fake", job_id=job_id, name=f"job{job_id}", source="cli", resources={}, command=[]
        )
        ids.append(job_id)
    return ids


async def test_stopping_leaves_a_refresh_someone_waits_for_and_closing_ends_it(
    monitor: Monitor, fake: FakeTransport, store: Store
) -> None:
    """The svc agent stops the monitor after each request while another request may wait on a refresh: that one
    still gets its answer. Closing the host ends a refresh nobody waits for any more, even one the scheduler
    never answers."""
    (job_id,) = await track(fake, store, 1)
    gate = asyncio.Event()
    answer = fake.queue
    asked: list[str | None] = []

    async def slow_queue(*, user: str | None = None) -> list[JobStatus]:
        asked.append(user)
        await gate.wait()
        return await answer(user=user)

    fake.queue = slow_queue  # type: ignore[method-assign]
    fake.set_state(job_id, JobState.RUNNING)
    waiting = asyncio.ensure_future(monitor.refresh("fake"))
    await eventually(lambda: len(asked) == 1)  # the refresh waits on the scheduler
    await monitor.stop()
    gate.set()
    assert [change.to_state for change in await waiting] == ["RUNNING"]
    gate.clear()
    left = asyncio.ensure_future(monitor.refresh("fake", max_age=0))
    await eventually(lambda: len(asked) == 2)
    left.cancel()
    await asyncio.wait_for(monitor.close(), DEADLINE)
    assert left.cancelled()
    gate.set()  # the shared queue query, still the registry's, ends


async def test_one_query_per_tick_for_every_tracked_job(
    monitor: Monitor, fake: FakeTransport, store: Store, events: list[Event]
) -> None:
    ids = await track(fake, store, 1000)
    fake.set_state(ids[0], JobState.RUNNING)
    fake.set_state(ids[1], JobState.FAILED, raw="FAILED", exit_code=3)
    fake.calls.clear()
    changes = await monitor.tick("fake")
    # one read of the queue for the 999 queued jobs, one question for the job that left it
    assert fake.calls == ["queue", "statuses"]
    assert {(c.job_id, c.to_state) for c in changes} == {(ids[0], "RUNNING"), (ids[1], "FAILED")}
    failed = next(e for e in events if e.payload["job_id"] == ids[1])
    assert failed.name == "job.status_changed"
    assert dict(failed.payload) == {
        "transport": "fake",
        "job_id": ids[1],
        "name": f"job{ids[1]}",
        "from": "PENDING",
        "to": "FAILED",
        "raw_state": "FAILED",
        "exit_code": 3,
    }


async def test_a_job_the_scheduler_does_not_report_is_not_failed(
    monitor: Monitor, fake: FakeTransport, store: Store
) -> None:
    (job_id,) = await track(fake, store, 1)
    del fake.jobs[job_id]  # e.g. sacct lagging right after submit, or slurmdbd down
    assert await monitor.tick("fake") == []
    assert store.call(repo.find_job, "fake", job_id).state == "PENDING"


async def test_a_job_missing_for_lost_after_ends_failed_lost_and_is_no_longer_queried(
    monitor: Monitor, fake: FakeTransport, store: Store, events: list[Event], loop_clock: LoopClock
) -> None:
    monitor.lost_after = 600.0  # seconds on the loop's clock, which the test moves: the machine's pace is no matter
    gone, kept = await track(fake, store, 2)
    del fake.jobs[gone]  # the scheduler forgot it
    assert await monitor.tick("fake") == []
    loop_clock.advance(400)
    assert await monitor.tick("fake") == []  # missing for less than lost_after: still live
    fake.jobs[gone] = fake.jobs[kept].model_copy(update={"job_id": gone})  # seen again: the clock restarts
    await monitor.tick("fake")
    del fake.jobs[gone]
    await monitor.tick("fake")
    loop_clock.advance(400)
    assert await monitor.tick("fake") == []  # 800 s since first missed, but only 400 s since last seen
    loop_clock.advance(300)
    [change] = await monitor.tick("fake")
    assert (change.job_id, change.from_state, change.to_state) == (gone, "PENDING", "FAILED")
    assert change.raw_state.startswith("LOST (in neither squeue nor accounting for ")
    record = store.call(repo.find_job, "fake", gone)
    assert (record.state, record.ended_at is not None) == ("FAILED", True)
    assert store.call(repo.live_job_ids, "fake") == [kept]  # never asked about again
    assert [event.payload["to"] for event in events] == ["FAILED"]


async def test_the_loop_survives_scheduler_errors_and_ends_when_nothing_is_live(
    monitor: Monitor, fake: FakeTransport, store: Store
) -> None:
    (job_id,) = await track(fake, store, 1)
    original = fake.statuses
    failures = 0

    async def flaky(ids: list[str]) -> dict[str, object]:
        nonlocal failures
        if failures < 2:
            failures += 1
            raise TransportError("squeue failed", argv=["squeue"], exit_code=1, stderr="slurm_load_jobs error")
        return await original(ids)

    fake.statuses = flaky  # type: ignore[method-assign]
    fake.calls.clear()
    monitor.poke("fake")
    await eventually(lambda: "queue" in fake.calls, what="a tick while the job is queued")
    fake.set_state(job_id, JobState.COMPLETED)  # it leaves the queue: its status is asked, and fails twice
    await eventually(lambda: store.call(repo.find_job, "fake", job_id).state == "COMPLETED")
    assert failures == 2
    await eventually(monitor._loops["fake"].done, what="the loop's end")  # nothing live: it ended by itself
    await monitor.stop()


async def test_concurrent_refreshes_share_one_query(monitor: Monitor, fake: FakeTransport, store: Store) -> None:
    await track(fake, store, 5)
    fake.calls.clear()
    await asyncio.gather(*(monitor.refresh("fake") for _ in range(20)))
    assert fake.calls == ["queue"]  # every job still queued: the queue answers for all of them
    await monitor.refresh("fake")  # fresh enough: no new query
    assert fake.calls == ["queue"]


async def test_start_picks_up_live_jobs_left_in_the_store(monitor: Monitor, fake: FakeTransport, store: Store) -> None:
    (job_id,) = await track(fake, store, 1)
    fake.set_state(job_id, JobState.TIMEOUT)
    await monitor.start()
    await eventually(lambda: store.call(repo.find_job, "fake", job_id).state == "TIMEOUT")
    await monitor.stop()
