"""``GET /api/events`` on a real socket: transitions reach every open stream, a stalled reader holds up
nobody, and twenty open streams cost the scheduler what one costs (the streams only relay the monitor's tick)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from functools import partial

import httpx
import pytest

from svc_host.api.app import create_app
from svc_host.domain.jobs import JobState
from svc_host.domain.submission import RenderedScript
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.store import jobs as job_repo
from svc_host.testing.fake import FakeTransport
from svc_host.testing.http import TEST_API_TOKEN, security_for_tests
from svc_host.testing.live_server import live_server
from svc_host.testing.sse import SseMessage, sse_messages
from svc_host.testing.waiting import DEADLINE, eventually

AUTH = {"Authorization": f"Bearer {TEST_API_TOKEN}"}


@pytest.fixture
async def base_url(svc_test_host: Host) -> AsyncIterator[str]:
    svc_test_host.monitor.min_interval, svc_test_host.monitor.max_interval = 0.05, 0.2
    async with live_server(create_app(svc_test_host, security=security_for_tests())) as url:
        yield url


async def submit(fake: FakeTransport, host: Host, count: int) -> list[str]:
    ids = []
    for _ in range(count):
        job_id = await fake.submit(RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e"))
        await host.store.run(
            job_repo.add_job,
            transport="fake",
            job_id=job_id,
            name=f"job{job_id}",
            source="web",
            resources={},
            command=[],
        )
        ids.append(job_id)
    return ids


class Reader:
    """One open stream, collecting what it receives in the background (as a dashboard tab would)."""

    def __init__(self, response: httpx.Response) -> None:
        self.messages: list[SseMessage] = []
        self.awaited: set[str] = set()
        self.all_finished = asyncio.Event()
        self.task = asyncio.create_task(self._read(response))

    async def _read(self, response: httpx.Response) -> None:
        async for message in sse_messages(response):
            self.messages.append(message)
            if self.awaited and self.awaited <= self.finished():
                self.all_finished.set()

    def finished(self) -> set[str]:
        return {
            m.json()["payload"]["job_id"]
            for m in self.messages
            if m.event == "job.status_changed" and m.json()["payload"]["to"] == "COMPLETED"
        }


async def open_streams(stack: AsyncExitStack, client: httpx.AsyncClient, count: int) -> list[Reader]:
    readers = []
    for _ in range(count):
        response = await stack.enter_async_context(client.stream("GET", "/api/events", headers=AUTH))
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        readers.append(Reader(response))
    return readers


async def watch_jobs_finish(host: Host, fake: FakeTransport, base_url: str, streams: int) -> tuple[int, list[Reader]]:
    """Open ``streams`` streams, run 3 jobs to completion under the monitor; returns the scheduler calls made."""
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(httpx.AsyncClient(base_url=base_url, timeout=10))
        readers = await open_streams(stack, client, streams)
        calls_before = len(fake.calls)
        ids = await submit(fake, host, 3)
        for reader in readers:
            reader.awaited = set(ids)
        host.monitor.poke("fake")
        for state in (JobState.RUNNING, JobState.COMPLETED):
            for job_id in ids:
                fake.set_state(job_id, state)
            await eventually(partial(recorded, host, ids, state), what=f"the monitor recording {state.value}")
        await asyncio.wait_for(asyncio.gather(*(reader.all_finished.wait() for reader in readers)), DEADLINE)
        for reader in readers:
            reader.task.cancel()
        return len(fake.calls) - calls_before - 3, readers  # minus the 3 submits


async def recorded(host: Host, ids: list[str], state: JobState) -> bool:
    """Whether the store holds ``state`` for every job of ``ids``."""
    return {(await host.store.run(job_repo.find_job, "fake", job_id)).state for job_id in ids} == {state.value}


async def test_transitions_reach_every_open_stream_and_streams_add_no_scheduler_query(
    svc_test_host: Host, fake: FakeTransport, base_url: str
) -> None:
    ticks_before = svc_test_host.monitor.ticks.get("fake", 0)
    twenty, readers = await watch_jobs_finish(svc_test_host, fake, base_url, streams=20)
    assert len(readers) == 20
    # every scheduler call came from a monitor tick: one read of the queue per tick (and one question for the
    # jobs that left it), whatever the number of streams
    ticks = svc_test_host.monitor.ticks["fake"] - ticks_before
    assert ticks <= twenty <= 2 * ticks
    assert set(fake.calls) == {"submit", "queue", "statuses"}
    # and streams do not make the monitor tick: with nothing live it stops, and twenty streams opened and fed an
    # event leave it stopped
    await eventually(svc_test_host.monitor._loops["fake"].done, what="the monitor's stop once nothing is live")
    calls = len(fake.calls)
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(httpx.AsyncClient(base_url=base_url, timeout=10))
        idle = await open_streams(stack, client, 20)
        svc_test_host.emit(Event(name="sweep_run.status_changed", payload={"id": 1, "to": "completed"}))
        await eventually(lambda: all(reader.messages for reader in idle), what="the event on every stream")
        for reader in idle:
            reader.task.cancel()
    assert len(fake.calls) == calls
    assert svc_test_host.monitor._loops["fake"].done()


async def test_event_frames_carry_ids_names_and_the_payload(
    svc_test_host: Host, fake: FakeTransport, base_url: str
) -> None:
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=10) as client,
        client.stream("GET", "/api/events", params={"types": "sweep_run.status_changed"}, headers=AUTH) as response,
    ):
        svc_test_host.emit(Event(name="job.status_changed", payload={"transport": "fake", "job_id": "1", "to": "X"}))
        svc_test_host.emit(
            Event(name="sweep_run.status_changed", payload={"id": 3, "from": "running", "to": "draining"})
        )
        messages = sse_messages(response)
        message = await asyncio.wait_for(anext(messages), DEADLINE)
    assert message.event == "sweep_run.status_changed"
    assert message.id is not None
    assert message.json()["payload"] == {"id": 3, "from": "running", "to": "draining"}
    assert message.json()["name"] == "sweep_run.status_changed"


async def test_a_stalled_reader_holds_up_neither_the_host_nor_other_readers(svc_test_host: Host, base_url: str) -> None:
    big = "x" * 2000
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=10) as client,
        client.stream("GET", "/api/events", headers=AUTH) as stalled,  # not read for now: its socket fills up
        client.stream("GET", "/api/events", headers=AUTH) as reading,
    ):
        for n in range(3000):  # emit never waits for a socket (how fast it is: bench/event_hub_publish.py)
            svc_test_host.emit(
                Event(name="job.status_changed", payload={"transport": "t", "job_id": str(n), "pad": big})
            )
            if n % 100 == 0:
                await asyncio.sleep(0)  # let the server write to the sockets, as it does between monitor ticks
        svc_test_host.emit(Event(name="sweep_run.status_changed", payload={"id": 1, "to": "completed"}))
        seen = []
        async for message in sse_messages(reading):
            seen.append(message.event)
            if message.event == "sweep_run.status_changed":
                break
        late = []
        async for message in sse_messages(stalled):  # reading at last, it is told it missed events
            late.append(message.event)
            if message.event == "sweep_run.status_changed":
                break
    assert "sweep_run.status_changed" in seen
    assert "resync" in late
    assert late.count("job.status_changed") < 3000


async def test_a_reconnect_with_last_event_id_replays_what_was_missed(svc_test_host: Host, base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        async with client.stream("GET", "/api/events", headers=AUTH) as first:
            svc_test_host.emit(Event(name="workflow_run.status_changed", payload={"id": "r1", "to": "running"}))
            seen = await asyncio.wait_for(anext(sse_messages(first)), DEADLINE)
        svc_test_host.emit(Event(name="workflow_run.status_changed", payload={"id": "r1", "to": "completed"}))
        async with client.stream("GET", "/api/events", headers={**AUTH, "Last-Event-ID": seen.id or ""}) as again:
            replayed = await asyncio.wait_for(anext(sse_messages(again)), DEADLINE)
        async with client.stream("GET", "/api/events", headers={**AUTH, "Last-Event-ID": "feedface-9"}) as stale:
            told = await asyncio.wait_for(anext(sse_messages(stale)), DEADLINE)
    assert replayed.json()["payload"] == {"id": "r1", "to": "completed"}
    assert told.event == "resync"


async def test_the_stream_needs_the_token(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        refused = await client.get("/api/events")
    assert refused.status_code == 401


async def test_an_idle_stream_sends_heartbeat_comments_and_ends_when_closed() -> None:
    from svc_host.api.routes.events import sse_stream
    from svc_host.runtime.events import EventHub

    hub = EventHub()
    subscription = hub.subscribe()
    chunks = sse_stream(subscription, heartbeat=0.05)
    assert await anext(chunks) == "retry: 3000\n: connected\n\n"
    assert await asyncio.wait_for(anext(chunks), DEADLINE) == ": keep-alive\n\n"  # a comment: browsers ignore it
    hub.end_streams()
    assert [chunk async for chunk in chunks] == []
    assert hub.subscriber_count == 0
