"""``GET /api/events``: the dashboard's live feed, as server-sent events (``text/event-stream``).

Every event the host emits (``job.status_changed``, ``workflow_run.status_changed``, ``sweep_run.status_changed``,
``resources.sampled``) arrives as ``id: <epoch>-<n>``, ``event: <name>``, ``data: {"name", "at", "payload"}``.
``event: resync`` says the client missed events (it fell behind, or reconnected too late to replay) and should
reload what it shows. A comment line every ``HEARTBEAT_SECONDS`` keeps proxies from closing an idle stream.
``?types=a,b`` limits the stream to those names; a reconnecting browser's ``Last-Event-ID`` replays what it
missed. The stream only relays (``svc_host.runtime.events``): it never asks the scheduler anything.

A stream opened with a browser session lasts no longer than the session: a logout through this server ends it at
once, and the session is asked about again every ``SESSION_RECHECK`` seconds (a logout through another server of
the store, the end of its lifetime). A stream opened with the token lasts as long as the server.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any

from fastapi import APIRouter, FastAPI, Header, Query, Request
from fastapi.responses import StreamingResponse

from svc_host.api.middleware import session_cookie, session_id
from svc_host.api.security import bearer_token
from svc_host.api.sessions import SESSION_RECHECK, WebSessions
from svc_host.runtime.events import EventHub, HubEvent, Subscription, event_hub

HEARTBEAT_SECONDS = 15.0
RETRY_MS = 3000
"""How long a browser waits before reconnecting a dropped stream."""


def end_streams_on_exit_signal(hub: EventHub) -> Callable[[], None]:
    """Make SIGINT/SIGTERM end the open streams before the server's own handler runs; returns the undo.

    uvicorn waits for every open response to finish before it shuts the app down, and an event stream never
    finishes by itself: without this, a server with a dashboard open would hang on exit. Only the main thread
    may set signal handlers; elsewhere (an app run by a test client) there is nothing to chain.
    """
    loop = asyncio.get_running_loop()
    installed: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        if not callable(previous):
            continue

        def chained(
            sig: int, frame: FrameType | None, previous: Callable[[int, FrameType | None], Any] = previous
        ) -> None:
            loop.call_soon_threadsafe(hub.end_streams)
            previous(sig, frame)

        try:
            signal.signal(signum, chained)
        except ValueError:  # not the main thread
            return lambda: None
        installed[signum] = (chained, previous)

    def undo() -> None:
        for signum, (chained, previous) in installed.items():
            if signal.getsignal(signum) is chained:
                signal.signal(signum, previous)

    return undo


@asynccontextmanager
async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
    hub = event_hub()
    undo = end_streams_on_exit_signal(hub)
    yield
    undo()
    hub.end_streams()


router = APIRouter(prefix="/api", tags=["events"], lifespan=_lifespan)


def frame(event: HubEvent) -> str:
    """One event in the SSE wire format."""
    return f"id: {event.id}\nevent: {event.name}\ndata: {event.data}\n\n"


async def sse_stream(
    subscription: Subscription,
    heartbeat: float,
    still_allowed: Callable[[], Awaitable[bool]] | None = None,
    recheck: float = SESSION_RECHECK,
) -> AsyncIterator[str]:
    """The text of a stream: the retry hint, then events as they come, a comment when idle for `heartbeat` s.
    With ``still_allowed`` (a session's stream), it ends as soon as that says no, asked every ``recheck`` s."""
    loop = asyncio.get_running_loop()
    try:
        yield f"retry: {RETRY_MS}\n: connected\n\n"
        quiet_since = loop.time()
        while True:
            until_heartbeat = max(0.0, quiet_since + heartbeat - loop.time())
            wait = until_heartbeat if still_allowed is None else min(until_heartbeat, recheck)
            batch = await subscription.next_batch(wait)
            if batch is None or (still_allowed is not None and not await still_allowed()):
                return
            if subscription.take_lost():
                yield "event: resync\ndata: {}\n\n"
            if batch:
                quiet_since = loop.time()
            elif wait == until_heartbeat:
                quiet_since = loop.time()
                yield ": keep-alive\n\n"
            for event in batch:
                yield frame(event)
    finally:
        subscription.close()


def _session_guard(
    request: Request, subscription: Subscription
) -> tuple[Callable[[], Awaitable[bool]] | None, Callable[[], None]]:
    """For a stream opened with a browser session: what asks whether the session still lives, and the undo of the
    watch that ends the stream when this server logs the session out. ``(None, no-op)`` for the token's streams
    and a server without logins."""
    sessions: WebSessions | None = getattr(request.app.state, "sessions", None)
    presented = session_id(request)
    if sessions is None or presented is None or bearer_token(request.headers.get("authorization")) is not None:
        return None, lambda: None
    cookie = session_cookie(request)
    undo = sessions.on_close(presented, cookie, subscription.close)
    return (lambda: sessions.valid(presented, cookie)), undo


async def _guarded(stream: AsyncIterator[str], undo: Callable[[], None]) -> AsyncIterator[str]:
    try:
        async for text in stream:
            yield text
    finally:
        undo()


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "an endless stream of events"}},
)
async def events(
    request: Request,
    types: str | None = Query(None, description="Comma-separated event names to receive (default: all)."),
    last_event_id: str | None = Header(None, alias="Last-Event-ID"),
) -> StreamingResponse:
    """Server-sent events: what the monitor, the workflow engine, the sweep orchestrator and the resource
    sampler emit, as they emit it. A stream opened with a browser session ends when the session does."""
    names = [name.strip() for name in types.split(",") if name.strip()] if types else None
    subscription = event_hub().subscribe(names, last_event_id=last_event_id)
    still_allowed, undo = _session_guard(request, subscription)
    return StreamingResponse(
        _guarded(sse_stream(subscription, HEARTBEAT_SECONDS, still_allowed), undo),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
