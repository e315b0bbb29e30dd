"""One worker task per key: ``kick(key)`` asks for a pass of ``step(key)``; kicks that arrive while a pass
runs coalesce into one more pass. Used by the workflow engine (per run) and the sweep orchestrator (per
sweep), so a burst of scheduler transitions costs one re-plan, never one per transition."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
K = TypeVar("K", bound=Hashable)


class KeyedWorkers(Generic[K]):
    """Coalescing per-key workers; a failing pass is logged and never kills its worker silently."""

    def __init__(self, step: Callable[[K], Awaitable[None]], *, label: str) -> None:
        self.step = step
        self.label = label
        self.closed = False
        self._dirty: set[K] = set()
        self._workers: dict[K, asyncio.Task[None]] = {}

    def kick(self, key: K) -> None:
        """Run a pass for ``key`` soon (no-op once closed)."""
        if self.closed:
            return
        self._dirty.add(key)
        worker = self._workers.get(key)
        if worker is None or worker.done():
            self._workers[key] = asyncio.create_task(self._work(key), name=f"svc-{self.label}-{str(key)[:8]}")

    def worker(self, key: K) -> asyncio.Task[None] | None:
        """The task working on ``key`` right now, if any."""
        return self._workers.get(key)

    def close(self) -> list[asyncio.Task[None]]:
        """Accept no more kicks; returns the running workers (the caller cancels and awaits them)."""
        self.closed = True
        return list(self._workers.values())

    async def _work(self, key: K) -> None:
        try:
            while key in self._dirty:
                self._dirty.discard(key)
                try:
                    await self.step(key)
                except Exception:  # a bug or an unreachable store must not kill the worker silently
                    log.exception("%s %s: a pass failed", self.label, key)
        finally:
            if self._workers.get(key) is asyncio.current_task():
                del self._workers[key]
