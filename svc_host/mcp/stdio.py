"""The wire of ``svc mcp``: stdin read and stdout written by the event loop itself.

The SDK's stdio transport reads each line and writes each answer through worker threads (``anyio.wrap_file``):
after an agent's pause, one tool call waits for three thread wake-ups besides its own work (the read, the write,
the flush), about 3 ms on the busy 2-core development machine (``bench/mcp_startup.py``), as much as a quarter of
a raw ``squeue``. Here the loop watches fd 0 and writes fd 1 as pipes; the SDK's ``stdio_server`` still frames,
parses and serialises every message, it is only handed these two streams.

Like the SDK, fd 0 and fd 1 point at the null device and at stderr while serving (a child or a stray print never
reaches the wire) and are restored afterwards, with their blocking mode. Only pipes and sockets, what an MCP client
connects, are served this way: the loop makes them non-blocking, which would also change a terminal that the
shell shares. When stdin or stdout is anything else (a terminal, a regular file, the null device),
``loop_stdio`` gives ``None`` and the SDK's own transport serves.

The bytes ``svc mcp`` read before the SDK was loaded (``svc_host.mcp.handoff``) come first on the reader; when svc
answered an ``initialize`` itself, the SDK's answer to it is checked against svc's and not sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Self

from svc_host.mcp.handoff import watchable

if TYPE_CHECKING:
    from svc_host.mcp.opening import Early

log = logging.getLogger(__name__)

LINE_LIMIT = 1 << 28
"""Longest line read (bytes): the SDK's transport reads lines of any length; a message this long is not sent."""


class LineReader:
    """``async for line in reader``: the text lines of a pipe, as ``stdio_server`` reads its stdin."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        line = await self.stream.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class LineWriter:
    """``write`` and ``flush`` as ``stdio_server`` calls them on its stdout; ``flush`` waits while the pipe is full.

    ``answered``: a request svc already answered, whose answer from the SDK is left out (one line per message)."""

    def __init__(self, stream: asyncio.StreamWriter, answered: Early | None = None) -> None:
        self.stream = stream
        self.answered = answered

    async def write(self, text: str) -> None:
        if self.answered is not None and answers_again(text, self.answered):
            self.answered = None
            return
        self.stream.write(text.encode())

    async def flush(self) -> None:
        await self.stream.drain()


def answers_again(line: str, answered: Early) -> bool:
    """Whether ``line`` is the SDK's answer to the request svc ``answered`` already; one that differs from svc's
    is logged (the client has svc's: ``opening.VERIFIED_SDK`` no longer gives what svc says it does)."""
    message = json.loads(line)
    if message.get("id") != answered.request_id or not message.keys() & {"result", "error"}:
        return False
    if message.get("result") != answered.result:
        log.warning(
            "svc answered request %r before the SDK was loaded, unlike the SDK: %s, the SDK: %s",
            answered.request_id,
            answered.result,
            message,
        )
    return True


@contextlib.asynccontextmanager
async def loop_stdio(
    consumed: bytes = b"", answered: Early | None = None
) -> AsyncIterator[tuple[LineReader, LineWriter] | None]:
    """The process's stdin (after ``consumed``, the bytes already read from it) and stdout (without the SDK's
    answer to the ``answered`` request) as loop-driven streams while the block runs, or ``None`` when either
    cannot be watched by the loop."""
    if not all(watchable(fd) for fd in (0, 1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    modes = {fd: fcntl.fcntl(fd, fcntl.F_GETFL) for fd in (wire_in, wire_out)}
    reading: asyncio.ReadTransport | None = None
    writing: asyncio.WriteTransport | None = None
    try:
        stream = asyncio.StreamReader(limit=LINE_LIMIT)
        stream.feed_data(consumed)
        reading, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(wire_in, "rb", buffering=0, closefd=False)
        )
        writing, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0, closefd=False)
        )
        writer = asyncio.StreamWriter(writing, protocol, None, loop)
        with _diverted(wire_in, wire_out):
            yield LineReader(stream), LineWriter(writer, answered)
    finally:
        for transport in (reading, writing):
            if transport is not None:
                transport.close()
        for fd, mode in modes.items():
            fcntl.fcntl(fd, fcntl.F_SETFL, mode)
            os.close(fd)


@contextlib.contextmanager
def _diverted(wire_in: int, wire_out: int) -> Iterator[None]:
    """fd 0 reads the null device and fd 1 writes to stderr until the block ends; then they are the wire again
    (``wire_in`` and ``wire_out``: copies of them)."""
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield
    finally:
        os.close(null)
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
