"""The event hub: fan-out with ids, coalescing per subject, bounded buffers, replay and resync."""

from __future__ import annotations

import asyncio
import json
import threading

from svc_host.plugin_core.records import Event
from svc_host.runtime.events import EventHub
from svc_host.testing.waiting import DEADLINE


def job_event(job_id: str, to: str) -> Event:
    return Event(name="job.status_changed", payload={"transport": "local", "job_id": job_id, "to": to})


async def test_every_subscriber_sees_every_event_in_order_with_ids() -> None:
    hub = EventHub()
    first, second = hub.subscribe(), hub.subscribe()
    hub.publish(job_event("1", "RUNNING"))
    hub.publish(Event(name="sweep_run.status_changed", payload={"id": 4, "to": "running"}))
    for subscription in (first, second):
        batch = await subscription.next_batch(1)
        assert batch is not None
        assert [event.name for event in batch] == ["job.status_changed", "sweep_run.status_changed"]
        assert [event.id for event in batch] == [f"{hub.epoch}-1", f"{hub.epoch}-2"]
        assert json.loads(batch[0].data)["payload"] == {"transport": "local", "job_id": "1", "to": "RUNNING"}


async def test_a_subscriber_asking_for_some_names_gets_only_those() -> None:
    hub = EventHub()
    sweeps_only = hub.subscribe(["sweep_run.status_changed"])
    hub.publish(job_event("1", "RUNNING"))
    hub.publish(Event(name="sweep_run.status_changed", payload={"id": 4, "to": "running"}))
    batch = await sweeps_only.next_batch(1)
    assert batch is not None
    assert [event.name for event in batch] == ["sweep_run.status_changed"]


async def test_a_newer_event_about_the_same_job_replaces_the_undelivered_one() -> None:
    hub = EventHub()
    reader = hub.subscribe()
    hub.publish(job_event("1", "RUNNING"))
    hub.publish(job_event("2", "RUNNING"))
    hub.publish(job_event("1", "COMPLETED"))
    batch = await reader.next_batch(1)
    assert batch is not None
    assert [(json.loads(e.data)["payload"]["job_id"], json.loads(e.data)["payload"]["to"]) for e in batch] == [
        ("2", "RUNNING"),
        ("1", "COMPLETED"),
    ]
    assert not reader.take_lost()


async def test_a_reader_that_never_reads_costs_the_publisher_nothing_and_is_told_to_resync() -> None:
    hub = EventHub(capacity=8)
    stalled = hub.subscribe()
    for n in range(10_000):  # publishing never waits for a reader (how fast it is: bench/event_hub_publish.py)
        hub.publish(job_event(str(n), "RUNNING"))
    batch = await stalled.next_batch(1)
    assert batch is not None
    assert len(batch) == 8  # bounded: the newest eight
    assert json.loads(batch[-1].data)["payload"]["job_id"] == "9999"
    assert stalled.take_lost()
    assert not stalled.take_lost()


async def test_a_reconnecting_client_gets_what_it_missed_or_a_resync() -> None:
    hub = EventHub(replay=4)
    for n in range(3):
        hub.publish(job_event(str(n), "RUNNING"))
    back = hub.subscribe(last_event_id=f"{hub.epoch}-1")
    batch = await back.next_batch(1)
    assert batch is not None
    assert [event.seq for event in batch] == [2, 3]
    assert not back.take_lost()

    for n in range(3, 10):
        hub.publish(job_event(str(n), "RUNNING"))
    too_late = hub.subscribe(last_event_id=f"{hub.epoch}-2")
    assert too_late.take_lost()
    other_server = hub.subscribe(last_event_id="0badc0de-5")
    assert other_server.take_lost()


async def test_idle_wait_returns_empty_and_closing_ends_the_reader() -> None:
    hub = EventHub()
    reader = hub.subscribe()
    assert await reader.next_batch(0.05) == []
    waiting = asyncio.create_task(reader.next_batch(30))
    await asyncio.sleep(0)  # the reader waits
    hub.end_streams()
    assert await asyncio.wait_for(waiting, DEADLINE) is None
    assert hub.subscriber_count == 0


async def test_events_published_from_another_thread_reach_the_reader() -> None:
    hub = EventHub()
    reader = hub.subscribe()
    thread = threading.Thread(target=hub.publish, args=(job_event("7", "FAILED"),))
    thread.start()
    thread.join()
    batch = await reader.next_batch(1)
    assert batch is not None
    assert [json.loads(event.data)["payload"]["job_id"] for event in batch] == ["7"]
