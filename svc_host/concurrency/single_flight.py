"""Single flight: concurrent calls with one key share one call, so a burst of identical scheduler queries
(fifty browser tabs asking for the queue at once) costs the scheduler one command, not fifty."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from svc_host.errors import TransportError

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    """Per key, at most one call of ``fetch`` runs at a time; callers that arrive while it runs get its result
    (or its exception). Nothing is kept once the call ends: the next caller starts a new one."""

    def __init__(self) -> None:
        self._flights: dict[K, asyncio.Future[V]] = {}

    async def run(self, key: K, fetch: Callable[[], Awaitable[V]]) -> V:
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(fetch())
            self._flights[key] = flight
            flight.add_done_callback(lambda done: self._land(key, done))
        # A caller that gives up (a closed browser tab) must not cancel the command the others wait for.
        try:
            return await asyncio.shield(flight)
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if flight.cancelled() and caller is not None and not caller.cancelling():
                raise TransportError("the query was stopped: its transport closed while it ran") from None
            raise

    async def close(self) -> None:
        """Cancel the calls running now and wait for them to end (their owner is closing); callers still waiting get
        ``TransportError``."""
        flights = list(self._flights.values())
        for flight in flights:
            flight.cancel()
        await asyncio.gather(*flights, return_exceptions=True)

    def _land(self, key: K, flight: asyncio.Future[V]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()  # retrieved: every waiter may have given up, the error is theirs, not the loop's
