"""One GET through the way in, as svc's watch asks it: is the app answering (the kind's ``ready_path``), and are
its kernels busy (``busy_path``, Jupyter's ``api/kernels``)?

The request goes where the proxy's do (``Transport.open_tcp`` to the node guard) with the session's secret in
``X-Svc-Session-Secret`` (and ``extra_headers``, e.g. Jupyter's token), so an app that answers svc's probe also
answers the browser. h11 (the HTTP/1.1 state machine wsproto is built on) parses the answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import h11

from svc_host.errors import TransportError
from svc_host.transports.base import Transport

SECRET_HEADER = "X-Svc-Session-Secret"  # noqa: S105 - a header name, not a secret
MAX_BODY = 1_048_576
"""The most of an answer's body kept (a kernel list is a few hundred bytes per kernel)."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        """2xx or 3xx: the app answers (a redirect to its login or UI is an answer)."""
        return 200 <= self.status < 400


async def get(
    transport: Transport,
    host: str,
    port: int,
    path: str,
    *,
    secret: str,
    extra_headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> Answer | None:
    """GET ``path`` from the node guard at ``host:port``; ``None`` when nothing answered (no connection, a closed
    or silent app, a malformed answer) within ``timeout`` seconds."""
    try:
        return await asyncio.wait_for(_get(transport, host, port, path, secret, extra_headers or {}), timeout)
    except (TimeoutError, OSError, TransportError, h11.ProtocolError):
        return None


async def _get(
    transport: Transport, host: str, port: int, path: str, secret: str, extra: Mapping[str, str]
) -> Answer | None:
    reader, writer = await transport.open_tcp(host, port)
    try:
        conn = h11.Connection(our_role=h11.CLIENT)
        headers = [("Host", f"{host}:{port}"), (SECRET_HEADER, secret), ("Connection", "close"), *extra.items()]
        writer.write(conn.send(h11.Request(method="GET", target=path, headers=headers)))
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()
        status, body = 0, bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65_536))
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                body += event.data[: MAX_BODY - len(body)]
            elif isinstance(event, h11.EndOfMessage):
                return Answer(status, bytes(body))
            elif isinstance(event, h11.ConnectionClosed):
                return Answer(status, bytes(body)) if status else None
    finally:
        writer.close()


def busy(answer: Answer | None) -> bool:
    """Whether a ``busy_path`` answer lists something busy (Jupyter: a kernel whose ``execution_state`` is
    ``busy``); an unreadable answer is not busy."""
    if answer is None or not answer.ok:
        return False
    try:
        items: Any = json.loads(answer.body)
    except ValueError:
        return False
    return isinstance(items, list) and any(
        isinstance(item, dict) and item.get("execution_state") == "busy" for item in items
    )
