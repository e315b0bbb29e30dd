"""The WebSocket half of the session proxy: the browser's WebSocket (ASGI) joined to one opened to the app with
wsproto, frame by frame.

The handshake toward the app carries the browser's sub-protocols (Jupyter's kernel channel asks for
``v1.kernel.websocket.jupyter.org``) and the secret; the browser is accepted with the sub-protocol the app chose.
Text and binary messages, close codes and reasons go through; the app's pings are answered here (the browser's
are answered by the ASGI server). When the app's side ends without a close frame the browser's is closed with
1011 (the app, or the connection to it, went away: an SSH channel simply ends when its connection drops) or 1012
(the connection raised an error: try again), never left hanging; a page reconnects to a new channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.types import Receive, Scope, Send
from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Event,
    Ping,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from svc_host.sessions.proxy_headers import header, to_app, to_browser
from svc_host.sessions.target import SessionTarget, Unreachable, dial

if TYPE_CHECKING:
    from svc_host.transports.streams import ByteReader, ByteWriter

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
HANDSHAKE_TIMEOUT = 30.0
MAX_MESSAGE = 64 * 1024 * 1024
"""A message from the app larger than this closes the WebSocket with 1009 (too big) instead of filling memory."""
APP_WENT_AWAY = 1011
CONNECTION_BROKE = 1012
TOO_BIG = 1009
ABNORMAL = 1006


class AppSide:
    """The WebSocket to the app: wsproto's client state over the dialled connection."""

    def __init__(self, reader: ByteReader, writer: ByteWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.pending: list[Event] = []

    async def send(self, event: Event) -> None:
        self.writer.write(self.ws.send(event))
        await self.writer.drain()

    async def next_event(self) -> Event | None:
        """The next event from the app; None when its side ended without one (EOF); ``Unreachable`` when the
        connection broke."""
        while not self.pending:
            try:
                data = await self.reader.read(CHUNK)
            except Exception as exc:  # an SSH channel raises asyncssh's own errors, not OSError
                raise Unreachable(f"the connection to the app broke: {exc}") from exc
            self.ws.receive_data(data or None)
            self.pending.extend(self.ws.events())
            if not data and not self.pending:
                return None
        return self.pending.pop(0)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already closed by the other side or the transport
            self.writer.close()


async def relay(
    scope: Scope, receive: Receive, send: Send, target: SessionTarget, on_traffic: Callable[[], None]
) -> None:
    """Serve one browser WebSocket by relaying it to the app."""
    if (await receive())["type"] != "websocket.connect":
        return
    try:
        reader, writer = await dial(target)
    except Unreachable as exc:
        await _refuse(scope, send, 502, f"svc cannot reach this session's app: {exc}")
        return
    app = AppSide(reader, writer)
    try:
        accepted = await _handshake(scope, send, app, target)
        if accepted is None:
            return
        await send({"type": "websocket.accept", "subprotocol": accepted.subprotocol})
        on_traffic()
        await _pump(receive, send, app, on_traffic)
    finally:
        app.close()


async def _handshake(scope: Scope, send: Send, app: AppSide, target: SessionTarget) -> AcceptConnection | None:
    """Open the WebSocket to the app; answer the browser with the app's refusal (or a 502) and return None when
    it is not accepted."""
    headers = list(scope["headers"])
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    query: bytes = scope.get("query_string", b"")
    request = Request(
        host=(header(headers, b"host") or b"localhost").decode("latin-1"),
        target=(path + (b"?" + query if query else b"")).decode("latin-1"),
        subprotocols=list(scope.get("subprotocols", [])),
        extra_headers=to_app(headers, target.secret, target.headers, websocket=True),
    )
    try:
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            await app.send(request)
            event = await app.next_event()
            if isinstance(event, AcceptConnection):
                return event
            if not isinstance(event, RejectConnection):
                raise Unreachable("the app closed the connection during the WebSocket handshake")
            body = bytearray()
            more = event.has_body
            while more:
                data = await app.next_event()
                if not isinstance(data, RejectData):
                    break
                body += data.data
                more = not data.body_finished
            await _refuse(scope, send, event.status_code, body.decode(errors="replace"), to_browser(event.headers))
    except TimeoutError:
        await _refuse(scope, send, 504, f"the app did not answer the WebSocket handshake in {HANDSHAKE_TIMEOUT:.0f} s")
    except (Unreachable, OSError, RemoteProtocolError, LocalProtocolError) as exc:
        await _refuse(scope, send, 502, f"svc cannot open a WebSocket to this session's app: {exc}")
    return None


async def _refuse(
    scope: Scope, send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """Answer a WebSocket handshake with an HTTP response in words where the server supports it (uvicorn does),
    else by closing it (the browser sees a failed handshake)."""
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    body = text.encode()
    kept = [(name, value) for name, value in headers or [] if name not in (b"content-length", b"content-type")]
    kept += [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "websocket.http.response.start", "status": status, "headers": kept})
    await send({"type": "websocket.http.response.body", "body": body, "more_body": False})


async def _pump(receive: Receive, send: Send, app: AppSide, on_traffic: Callable[[], None]) -> None:
    """Relay both ways until either side closes; the other side is then closed too."""
    tasks = {
        asyncio.ensure_future(_browser_to_app(receive, app, on_traffic)),
        asyncio.ensure_future(_app_to_browser(send, app, on_traffic)),
    }
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    for task in done:
        task.result()


async def _browser_to_app(receive: Receive, app: AppSide, on_traffic: Callable[[], None]) -> None:
    while True:
        message = await receive()
        try:
            if message["type"] == "websocket.receive":
                data = message.get("bytes")
                event: Event = (
                    BytesMessage(data=data) if data is not None else TextMessage(data=message.get("text") or "")
                )
                await app.send(event)
                on_traffic()
            elif message["type"] == "websocket.disconnect":
                if app.ws.state is ConnectionState.OPEN:
                    await app.send(
                        CloseConnection(code=message.get("code") or 1000, reason=message.get("reason") or None)
                    )
                return
        except Exception as exc:  # noqa: BLE001 - the app's side broke (asyncssh's errors are not OSError): the
            log.debug("session app side broke while sending: %s", exc)  # other task closes the browser's side
            await asyncio.Event().wait()


async def _app_to_browser(send: Send, app: AppSide, on_traffic: Callable[[], None]) -> None:
    parts: list[Any] = []
    size = 0
    while True:
        try:
            event = await app.next_event()
        except Unreachable as exc:
            log.info("session app connection broke under a WebSocket: %s", exc)
            await _close_browser(send, CONNECTION_BROKE, "the connection to the session's app broke")
            return
        except RemoteProtocolError as exc:
            await _close_browser(send, APP_WENT_AWAY, f"the session's app broke the WebSocket protocol: {exc}")
            return
        if event is None or (isinstance(event, CloseConnection) and event.code == ABNORMAL):
            # wsproto reports an end without a close frame as 1006, which no frame may carry
            await _close_browser(send, APP_WENT_AWAY, "the session's app, or svc's connection to it, went away")
            return
        if isinstance(event, TextMessage | BytesMessage):
            parts.append(event.data)
            size += len(event.data)
            if size > MAX_MESSAGE:
                with contextlib.suppress(Exception):
                    await app.send(CloseConnection(code=TOO_BIG))
                await _close_browser(send, TOO_BIG, f"a message from the app is larger than {MAX_MESSAGE} bytes")
                return
            if event.message_finished:
                if isinstance(event, TextMessage):
                    await send({"type": "websocket.send", "text": "".join(parts)})
                else:
                    await send({"type": "websocket.send", "bytes": b"".join(parts)})
                parts, size = [], 0
                on_traffic()
        elif isinstance(event, Ping):
            await app.send(event.response())
        elif isinstance(event, CloseConnection):
            if app.ws.state is ConnectionState.REMOTE_CLOSING:
                with contextlib.suppress(Exception):
                    await app.send(event.response())
            await _close_browser(send, event.code, event.reason or "")
            return


async def _close_browser(send: Send, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):  # the browser may be gone already
        await send({"type": "websocket.close", "code": code, "reason": reason})
