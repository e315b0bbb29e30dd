"""Shared reads: concurrent callers with one key share one call that started after each of them arrived.

Fifty dashboards asking for the history at once need not read the store fifty times; but an answer must not be
older than the question (a caller that has just saved a workflow and lists them must see it). So a caller never
joins a call already running: it joins the next one, which starts when the running one ends and answers every
caller that arrived meanwhile. Per key, one call runs and at most one waits to start; under load each read costs
one call per call's duration, whatever the number of callers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class _Call(Generic[V]):
    task: asyncio.Future[V] = field(init=False)
    started: bool = False


class SharedReads(Generic[K, V]):
    """Per key, callers share the next call of ``fetch`` to start (see the module docstring)."""

    def __init__(self) -> None:
        self._latest: dict[K, _Call[V]] = {}

    async def run(self, key: K, fetch: Callable[[], Awaitable[V]]) -> V:
        call = self._latest.get(key)
        if call is None or call.started:
            ahead = call
            call = _Call()
            call.task = asyncio.ensure_future(self._call(key, call, ahead, fetch))
            call.task.add_done_callback(_retrieved)
            self._latest[key] = call
        # A caller that gives up (a closed browser tab) must not cancel the call the others wait for.
        return await asyncio.shield(call.task)

    async def _call(self, key: K, call: _Call[V], ahead: _Call[V] | None, fetch: Callable[[], Awaitable[V]]) -> V:
        try:
            if ahead is not None:
                await asyncio.wait([ahead.task])  # whatever it gave, this call starts after it
            call.started = True
            return await fetch()
        finally:
            if self._latest.get(key) is call:
                del self._latest[key]


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # every caller may have given up: the error was theirs, not the loop's
