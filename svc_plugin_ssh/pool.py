"""A pool of SSH sessions for bursts of concurrent commands (sweeps): min(max_parallel, 8) connections.

Each command borrows the least busy session for its own duration only, so a job's lifetime never holds
a session and a sweep with more cells than sessions cannot starve. The pool closes its sessions on exit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Protocol

from svc_host.plugin import CommandResult, SlurmTransport

MAX_POOL = 8


class Session(Protocol):
    """One connection of the pool (an ``SSHTransport`` of the profile)."""

    @property
    def is_connected(self) -> bool: ...

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult: ...

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None: ...

    async def close(self) -> None: ...


class SessionPool(SlurmTransport):
    """A transport over up to ``size`` SSH connections of one profile (each made by ``session()``), opened on
    demand."""

    def __init__(self, name: str, size: int, session: Callable[[], Session]) -> None:
        self.name = name
        self.size = max(1, min(size, MAX_POOL))
        self._sessions = [session() for _ in range(self.size)]
        self._busy = [0] * self.size
        self._slots = asyncio.Semaphore(self.size)

    @property
    def opened(self) -> int:
        """How many of the pool's connections are open (for tests and benches)."""
        return sum(1 for session in self._sessions if session.is_connected)

    async def _borrow(self) -> int:
        await self._slots.acquire()
        index = min(range(self.size), key=lambda i: (self._busy[i], not self._sessions[i].is_connected))
        self._busy[index] += 1
        return index

    def _give_back(self, index: int) -> None:
        self._busy[index] -= 1
        self._slots.release()

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> CommandResult:
        index = await self._borrow()
        try:
            return await self._sessions[index].run(argv, stdin=stdin, timeout=timeout, idempotent=idempotent)
        finally:
            self._give_back(index)

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        index = await self._borrow()
        try:
            return await self._sessions[index].read_bytes(path, offset, limit)
        finally:
            self._give_back(index)

    async def close(self) -> None:
        await super().close()
        await asyncio.gather(*(session.close() for session in self._sessions), return_exceptions=True)

    async def __aenter__(self) -> SessionPool:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()
