"""The byte streams ``Transport.open_tcp`` hands back: what an asyncio stream pair offers, whatever carries it.

A local connection is an asyncio ``StreamReader``/``StreamWriter``; an SSH one is a direct-tcpip channel
(asyncssh's ``SSHReader``/``SSHWriter``). The session proxy needs only these few methods of either.
"""

from __future__ import annotations

from typing import Protocol


class ByteReader(Protocol):
    """The receiving half of a TCP connection."""

    async def read(self, n: int = -1, /) -> bytes:
        """Up to ``n`` bytes as they arrive; ``b""`` once the other side closed its half."""
        ...


class ByteWriter(Protocol):
    """The sending half of a TCP connection."""

    def write(self, data: bytes, /) -> None: ...

    async def drain(self) -> None:
        """Wait until the buffer is below its high-water mark (the peer keeps up)."""
        ...

    def close(self) -> None: ...
