"""The event hub: every ``svc_event`` of this process, fanned out to the open event streams (``GET /api/events``).

The hub only relays: what reaches a browser is what the monitor's one tick, the workflow engine and the sweep
orchestrator emitted anyway, so twenty open dashboards cost the scheduler exactly what one costs.

Publishing never waits on a reader. Each subscriber has a bounded buffer of undelivered events, keyed by
subject (one job, one run, one sweep): a newer event about the same subject replaces the undelivered older one
(the reader wants the state now, not every step), and when the buffer is full anyway the oldest event is
dropped and the subscriber is told to resync (reload what it shows). A slow browser therefore loses detail,
never the truth, and never holds up the monitor.
"""

from __future__ import annotations

import asyncio
import functools
import json
import secrets
import threading
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass

from svc_host.plugin_core.records import Event

SUBSCRIBER_BUFFER = 256
"""Undelivered events kept per subscriber before the oldest is dropped (and the subscriber told to resync)."""
REPLAY = 512
"""Recent events kept to replay to a client that reconnects with ``Last-Event-ID``."""


@dataclass(frozen=True)
class HubEvent:
    """An event as streamed: a hub-wide id (``<epoch>-<n>``), the event's name and its JSON text."""

    seq: int
    id: str
    name: str
    subject: str
    data: str


def subject_of(event: Event) -> str:
    """What an event is about; a newer event about the same subject supersedes an undelivered older one."""
    payload = event.payload
    if "job_id" in payload:
        return f"{event.name}:{payload.get('transport')}:{payload['job_id']}"
    if "id" in payload:
        return f"{event.name}:{payload['id']}"
    if "transport" in payload:
        return f"{event.name}:{payload['transport']}"
    return event.name


def encode(event: Event) -> str:
    """The ``data:`` of an event: ``{"name", "at", "payload"}`` as compact JSON (one line, as SSE needs)."""
    body = {"name": event.name, "at": event.at.isoformat(), "payload": dict(event.payload)}
    return json.dumps(body, default=str, separators=(",", ":"))


class Subscription:
    """One reader's view of the hub: its buffer, what it asked for, and whether it fell behind."""

    def __init__(self, hub: EventHub, names: frozenset[str] | None, capacity: int) -> None:
        self._hub = hub
        self._names = names
        self._capacity = capacity
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._pending: OrderedDict[str, HubEvent] = OrderedDict()
        self._wake = asyncio.Event()
        self.lost = False
        """Events were dropped (a full buffer, or a ``Last-Event-ID`` too old to replay): the reader must resync."""
        self.closed = False

    def wants(self, name: str) -> bool:
        return self._names is None or name in self._names

    def offer(self, event: HubEvent) -> None:
        """Take an event from any thread; never blocks."""
        if threading.get_ident() == self._thread:
            self._put(event)
        else:
            try:
                self._loop.call_soon_threadsafe(self._put, event)
            except RuntimeError:  # the reader's loop has ended: nobody is left to read
                self._hub.discard(self)

    def _put(self, event: HubEvent) -> None:
        if self.closed or not self.wants(event.name):
            return
        self._pending.pop(event.subject, None)
        if len(self._pending) >= self._capacity:
            self._pending.popitem(last=False)
            self.lost = True
        self._pending[event.subject] = event
        self._wake.set()

    async def next_batch(self, timeout: float) -> list[HubEvent] | None:
        """The undelivered events in order (waiting up to ``timeout`` for one; ``[]`` if none came), or
        ``None`` once the subscription is closed."""
        if not self._pending and not self.lost and not self.closed:
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                return [] if not self.closed else None
        if self.closed:
            return None
        batch = sorted(self._pending.values(), key=lambda event: event.seq)
        self._pending.clear()
        return batch

    def take_lost(self) -> bool:
        lost, self.lost = self.lost, False
        return lost

    def close(self) -> None:
        """End the subscription (its stream finishes); safe from any thread."""
        if threading.get_ident() == self._thread:
            self._close()
        else:
            try:
                self._loop.call_soon_threadsafe(self._close)
            except RuntimeError:
                self._hub.discard(self)

    def _close(self) -> None:
        self.closed = True
        self._wake.set()
        self._hub.discard(self)


class EventHub:
    """Fan-out of events to subscribers, with ids and a short replay buffer for reconnecting clients."""

    def __init__(self, *, capacity: int = SUBSCRIBER_BUFFER, replay: int = REPLAY) -> None:
        self.epoch = secrets.token_hex(4)
        """Names this hub's id sequence, so an id from a previous server process is never mistaken for ours."""
        self._capacity = capacity
        self._recent: deque[HubEvent] = deque(maxlen=replay)
        self._subscribers: set[Subscription] = set()
        self._seq = 0
        self._lock = threading.Lock()

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def publish(self, event: Event) -> HubEvent:
        """Hand ``event`` to every subscriber that wants it; returns it with its id. Never blocks."""
        with self._lock:
            self._seq += 1
            streamed = HubEvent(
                seq=self._seq,
                id=f"{self.epoch}-{self._seq}",
                name=event.name,
                subject=subject_of(event),
                data=encode(event),
            )
            self._recent.append(streamed)
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            subscriber.offer(streamed)
        return streamed

    def subscribe(self, names: Iterable[str] | None = None, *, last_event_id: str | None = None) -> Subscription:
        """A new subscription (call it on the event loop that will read it).

        With ``last_event_id`` the events after it are replayed when the hub still has them all; otherwise
        (a previous server's id, or too long ago) the subscription starts ``lost`` so the reader resyncs.
        """
        subscription = Subscription(self, frozenset(names) if names is not None else None, self._capacity)
        with self._lock:
            self._subscribers.add(subscription)
            missed = self._missed_since(last_event_id) if last_event_id else []
        if missed is None:
            subscription.lost = True
        else:
            for event in missed:
                subscription.offer(event)
        return subscription

    def _missed_since(self, last_event_id: str) -> list[HubEvent] | None:
        epoch, _, raw_seq = last_event_id.strip().rpartition("-")
        if epoch != self.epoch or not raw_seq.isdigit() or int(raw_seq) > self._seq:
            return None
        seq = int(raw_seq)
        oldest = self._recent[0].seq if self._recent else self._seq + 1
        if seq + 1 < oldest:
            return None
        return [event for event in self._recent if event.seq > seq]

    def discard(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers.discard(subscription)

    def end_streams(self) -> None:
        """Close every current subscription, so open streams finish (server shutdown). New ones may follow."""
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            subscriber.close()


@functools.cache
def event_hub() -> EventHub:
    """The process's hub, fed by the host's built-in ``svc_event`` implementation (``svc_host.api.hooks``)."""
    return EventHub()
