"""A job's line seen outside a tick (``Monitor.sighting``, stored by ``record`` after the answer) is stored as a
tick's would be: each transition once, however ticks and sightings interleave, and never undone by an older line."""

from __future__ import annotations

import asyncio

from svc_host.domain.jobs import JobState
from svc_host.domain.submission import RenderedScript
from svc_host.plugin_core.records import Event
from svc_host.runtime.monitor import Monitor
from svc_host.store import jobs as repo
from svc_host.store.database import Store
from svc_host.testing.fake import FakeTransport


async def tracked(fake: FakeTransport, store: Store) -> str:
    job_id = await fake.submit(RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e"))
    store.call(repo.add_job, transport="fake", job_id=job_id, name="one", source="mcp", resources={}, command=[])
    return job_id


def stored(store: Store, job_id: str) -> tuple[str, list[tuple[str, str]]]:
    record = store.call(repo.find_job, "fake", job_id)
    assert record is not None
    assert record.id is not None
    return record.state, [(row.from_state, row.to_state) for row in store.call(repo.transitions, record.id)]


async def test_a_sighting_and_ticks_store_a_start_once(
    monitor: Monitor, fake: FakeTransport, store: Store, events: list[Event]
) -> None:
    job_id = await tracked(fake, store)
    await monitor.tick("fake")
    fake.set_state(job_id, JobState.RUNNING)
    monitor.transports.snapshots.changed("fake")  # the queue's snapshot is gone: the job is asked about alone
    fake.calls.clear()
    sighting = await monitor.sighting("fake", job_id)
    assert sighting is not None
    assert sighting[0].state is JobState.RUNNING
    assert fake.calls == ["statuses"]
    assert stored(store, job_id) == ("PENDING", [(None, "PENDING")])  # nothing written before the caller answered
    monitor.record("fake", job_id, *sighting)
    await asyncio.gather(monitor.tick("fake"), monitor.tick("fake"))
    monitor.record("fake", job_id, *sighting)
    await monitor.stop()
    assert stored(store, job_id) == ("RUNNING", [(None, "PENDING"), ("PENDING", "RUNNING")])
    assert [(e.payload["job_id"], e.payload["to"]) for e in events] == [(job_id, "RUNNING")]


async def test_an_older_line_does_not_undo_a_newer_tick(monitor: Monitor, fake: FakeTransport, store: Store) -> None:
    job_id = await tracked(fake, store)
    await monitor.tick("fake")
    monitor.transports.snapshots.changed("fake")
    old = await monitor.sighting("fake", job_id)
    assert old is not None
    assert old[0].state is JobState.PENDING
    fake.set_state(job_id, JobState.RUNNING)
    await asyncio.sleep(0.01)  # the loop's clock moves on: the tick's queue is read after the sighting
    await monitor.tick("fake")
    monitor.record("fake", job_id, *old)  # its answer was sent before the tick; its bookkeeping comes late
    await monitor.stop()
    assert stored(store, job_id) == ("RUNNING", [(None, "PENDING"), ("PENDING", "RUNNING")])


async def test_a_fresh_queue_answers_without_a_query_and_an_ended_job_is_left_to_refresh(
    monitor: Monitor, fake: FakeTransport, store: Store
) -> None:
    job_id = await tracked(fake, store)
    await monitor.tick("fake")
    fake.calls.clear()
    sighting = await monitor.sighting("fake", job_id)  # the tick's queue is at most a second old
    assert sighting is not None
    assert sighting[0].state is JobState.PENDING
    assert fake.calls == []
    fake.set_state(job_id, JobState.COMPLETED)
    monitor.transports.snapshots.changed("fake")
    assert await monitor.sighting("fake", job_id) is None
    assert await monitor.sighting("fake", "999999") is None
    await monitor.stop()


async def test_the_monitor_remembers_which_jobs_it_last_saw_live(
    monitor: Monitor, fake: FakeTransport, store: Store
) -> None:
    job_id = await tracked(fake, store)
    assert not monitor.seen_live("fake", job_id)  # tracked, but no tick has seen it yet
    await monitor.tick("fake")
    assert monitor.seen_live("fake", job_id)
    fake.set_state(job_id, JobState.COMPLETED)
    monitor.transports.snapshots.changed("fake")
    await monitor.tick("fake")  # stores the end
    await monitor.tick("fake")  # no longer live: forgotten
    assert not monitor.seen_live("fake", job_id)
    assert not monitor.seen_live("other", job_id)
    await monitor.stop()
