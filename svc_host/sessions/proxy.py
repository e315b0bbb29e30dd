"""An ASGI reverse proxy to one session's app, over whatever connection ``dial`` opens (HTTP/1.1 with h11).

The connection is an SSH direct-tcpip channel through the login node, or a local socket, to the node guard in
front of the app; the guard lets a connection through only when its first request carries the session's secret,
which this proxy adds to every request and never hands to the browser. Bodies go through chunk by chunk both ways:
an upload, a download or a long poll is never held whole in memory. Connections whose exchange completed are kept
(a few per session) for the next requests without a body; one found closed is replaced once, transparently.
WebSockets: :mod:`svc_host.sessions.proxy_ws`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import h11
from starlette.types import Receive, Scope, Send

from svc_host.sessions import proxy_ws
from svc_host.sessions.proxy_headers import has_body, to_app, to_browser
from svc_host.sessions.target import SessionTarget, Unreachable, dial

if TYPE_CHECKING:
    from svc_host.transports.streams import ByteReader, ByteWriter

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
KEEP_IDLE = 4
"""Connections of a session kept open for its next requests (a page loads a few assets at once)."""
STREAM_ERRORS = (OSError, EOFError, h11.ProtocolError, Unreachable)


class ClientGone(Exception):
    """The browser went away before its request was sent on."""


class Upstream:
    """One connection to the app with its h11 client state."""

    def __init__(self, reader: ByteReader, writer: ByteWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)

    async def send(self, event: h11.Event) -> None:
        data = self.h11.send(event)
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def next_event(self) -> h11.Event | type[h11.PAUSED]:
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event  # type: ignore[return-value]
            try:
                data = await self.reader.read(CHUNK)
            except Exception as exc:  # an SSH channel raises asyncssh's own errors, not OSError
                raise Unreachable(f"the connection to the app broke: {exc}") from exc
            self.h11.receive_data(data)

    async def response(self) -> h11.Response:
        """The response head, past any 1xx; ``Unreachable`` when the app closed without one."""
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Response):
                return event
            if not isinstance(event, h11.InformationalResponse):
                raise Unreachable("the app closed the connection without answering")

    @property
    def reusable(self) -> bool:
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already closed by the other side or the transport
            self.writer.close()


class SessionProxy:
    """The ASGI app that proxies HTTP and WebSocket requests to one ``SessionTarget``, path unchanged (the app
    serves under the session's base path). ``on_traffic`` is called for every request and every chunk either way
    (the origin notes it in :mod:`svc_host.sessions.activity`, which the idle timeout reads)."""

    def __init__(
        self, target: SessionTarget, on_traffic: Callable[[], None] | None = None, *, keep_idle: int = KEEP_IDLE
    ) -> None:
        self.target = target
        self.on_traffic = on_traffic or _nothing
        self.keep_idle = keep_idle
        self._idle: list[Upstream] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.http(scope, receive, send)
        elif scope["type"] == "websocket":
            await proxy_ws.relay(scope, receive, send, self.target, self.on_traffic)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = h11.Request(
            method=scope["method"],
            target=request_target(scope),
            headers=to_app(scope["headers"], self.target.secret, self.target.headers, websocket=False),
        )
        self.on_traffic()
        try:
            upstream, response = await self._exchange(request, receive, with_body=has_body(scope["headers"]))
        except Unreachable as exc:
            await bad_gateway(send, str(exc))
            return
        except ClientGone:
            return
        await send(
            {"type": "http.response.start", "status": response.status_code, "headers": to_browser(response.headers)}
        )
        whole = await self._relay_arrived(upstream, send)
        if whole or (whole is None and await _until_gone(self._relay_body(upstream, send), receive)):
            self._give_back(upstream)
        else:
            upstream.close()

    async def close(self) -> None:
        """Close the kept connections (the session ended or moved)."""
        idle, self._idle = self._idle, []
        for upstream in idle:
            upstream.close()

    async def _exchange(
        self, request: h11.Request, receive: Receive, *, with_body: bool
    ) -> tuple[Upstream, h11.Response]:
        """Send the request (head and body) and read the response head. A kept connection that turns out closed is
        replaced by a new one once (only requests without a body use kept connections, so nothing is lost), and
        the others kept beside it are let go: they went stale together (the app restarted, the SSH connection
        dropped)."""
        for attempt in (1, 2):
            upstream, kept = await self._checkout(allow_kept=not with_body and attempt == 1)
            try:
                await upstream.send(request)
                if with_body:
                    await self._send_body(upstream, receive)
                else:
                    await upstream.send(h11.EndOfMessage())
                return upstream, await upstream.response()
            except ClientGone:
                upstream.close()
                raise
            except STREAM_ERRORS as exc:
                upstream.close()
                if not kept:
                    raise Unreachable(str(exc) or "the app closed the connection") from exc
                await self.close()
        raise AssertionError("unreachable")

    async def _checkout(self, *, allow_kept: bool) -> tuple[Upstream, bool]:
        if allow_kept and self._idle:
            return self._idle.pop(), True
        reader, writer = await dial(self.target)
        return Upstream(reader, writer), False

    def _give_back(self, upstream: Upstream) -> None:
        if upstream.reusable and len(self._idle) < self.keep_idle:
            upstream.h11.start_next_cycle()
            self._idle.append(upstream)
        else:
            upstream.close()

    async def _send_body(self, upstream: Upstream, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise ClientGone
            chunk: bytes = message.get("body", b"")
            if chunk:
                await upstream.send(h11.Data(data=chunk))
                self.on_traffic()
            if not message.get("more_body", False):
                await upstream.send(h11.EndOfMessage())
                return

    async def _relay_arrived(self, upstream: Upstream, send: Send) -> bool | None:
        """Hand the browser the part of the body that already arrived with the head, in one message; ``True`` when
        that was all of it (a small answer, or one without a body: no task is started, nothing is waited for),
        ``None`` when more is to come (``_relay_body`` then goes on), ``False`` when the app broke off."""
        chunks: list[bytes] = []
        while True:
            try:
                event = upstream.h11.next_event()
            except h11.ProtocolError as exc:
                log.warning("session app %s: response cut short: %s", self.target.endpoint or "?", exc)
                return False
            if isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
                continue
            ended = isinstance(event, h11.EndOfMessage)
            if event is h11.NEED_DATA or ended:
                break
            return False  # the connection closed in the middle of the answer
        if chunks or ended:
            await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": not ended})
            self.on_traffic()
        return True if ended else None

    async def _relay_body(self, upstream: Upstream, send: Send) -> bool:
        """Hand the response body to the browser as it arrives; False when the app broke off in the middle (the
        response is then left incomplete, so the browser sees a failed download rather than a short file)."""
        try:
            while True:
                event = await upstream.next_event()
                if isinstance(event, h11.Data):
                    await send({"type": "http.response.body", "body": bytes(event.data), "more_body": True})
                    self.on_traffic()
                elif isinstance(event, h11.EndOfMessage):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return True
                else:
                    raise Unreachable("the app closed the connection in the middle of its answer")
        except STREAM_ERRORS as exc:
            log.warning("session app %s: response cut short: %s", self.target.endpoint or "?", exc)
            return False


def _nothing() -> None:
    pass


async def _until_gone(relay: Any, receive: Receive) -> bool:
    """Run ``relay`` until it ends or the browser disconnects (a long poll left behind must not hold the app's
    connection); False when the browser left first."""
    task = asyncio.ensure_future(relay)
    gone = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (gone, task):
            if not pending.done():
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pending
    return not task.cancelled() and bool(task.result())


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def request_target(scope: Scope) -> bytes:
    """The request's path and query as the browser sent them (percent-encoding kept)."""
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    query: bytes = scope.get("query_string", b"")
    return path + (b"?" + query if query else b"")


async def bad_gateway(send: Send, reason: str) -> None:
    """502 in words: the app is not (or no longer) there."""
    body = (
        f"svc cannot reach this session's app: {reason}\n"
        "The app may still be starting, or the session ended: see it on the dashboard or with `svc session list`.\n"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 502,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
