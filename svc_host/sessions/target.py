"""What the session proxy needs to reach one session's app: a way to open a connection, the secret, and headers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from svc_host.errors import TransportError

if TYPE_CHECKING:
    from svc_host.transports.streams import ByteReader, ByteWriter

Dial = Callable[[], Awaitable[tuple["ByteReader", "ByteWriter"]]]
DIAL_TIMEOUT = 30.0
"""Seconds to wait for a connection to the app (an SSH channel through the login node included)."""


@dataclass(frozen=True)
class SessionTarget:
    """One session's app as the proxy reaches it.

    ``dial`` opens a fresh connection to the node guard in front of the app (``transport.open_tcp(node, port)``);
    ``secret`` is sent with every request as ``X-Svc-Session-Secret``; ``headers`` are added too (the kind's own,
    e.g. ``Authorization: token <secret>`` for Jupyter). ``endpoint`` names where the app listens ("node:port"):
    a target with another endpoint or secret is another target (the app moved: its kept connections are stale).
    """

    dial: Dial
    secret: str = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    endpoint: str = ""


class Unreachable(TransportError):
    """The app could not be reached, or closed the connection before it answered; the text says why."""


async def dial(target: SessionTarget, timeout: float = DIAL_TIMEOUT) -> tuple[ByteReader, ByteWriter]:
    """A new connection to the target's app, or ``Unreachable`` with the transport's reason."""
    try:
        return await asyncio.wait_for(target.dial(), timeout)
    except TimeoutError as exc:
        raise Unreachable(f"no connection to {target.endpoint or 'the app'} within {timeout:.0f} s") from exc
    except Unreachable:
        raise
    except (TransportError, OSError) as exc:
        raise Unreachable(str(exc) or type(exc).__name__) from exc
