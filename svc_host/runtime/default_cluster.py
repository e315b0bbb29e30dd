"""The server's default cluster, watched: every open dashboard hears when it moves, whoever moved it.

The default is the current SSH profile of the profiles file (or ``local``), and the file is written by this
server (Settings, ``POST .../activate``) and by other processes alike (``svc profile use`` in a terminal). A change
made here is announced at once (the route calls ``check`` after its write); one made elsewhere is seen by the
server's own look every ``every`` seconds (one ``stat`` of the file: the profiles are read again only when it
changed). Either way the event ``server.default_changed`` (``{transport}``) is emitted once per move, so tabs
that follow the default redraw within seconds, and no browser has to poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from svc_host.errors import SvcError
from svc_host.plugin_core.records import Event

log = logging.getLogger(__name__)

DEFAULT_CHANGED = "server.default_changed"
"""The event a move of the server's default cluster emits: ``{transport}``, the new default."""
CHECK_SECONDS = 2.0
"""How often a server looks for a default moved by another process."""


class DefaultClusterWatch:
    """Emits ``server.default_changed`` when ``current()`` names another cluster than the last one announced."""

    def __init__(
        self, current: Callable[[], str], emit: Callable[[Event], None], *, every: float = CHECK_SECONDS
    ) -> None:
        self._current = current
        self._emit = emit
        self._every = every
        self._known = current()
        self._task: asyncio.Task[None] | None = None

    def check(self) -> str | None:
        """The new default if it moved since the last look (announced now), else ``None``."""
        now = self._current()
        if now == self._known:
            return None
        self._known = now
        self._emit(Event(DEFAULT_CHANGED, {"transport": now}))
        return now

    def start(self) -> None:
        """Look every ``every`` seconds until ``close`` (a server's lifetime)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="default-cluster-watch")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        failing = False
        while True:
            await asyncio.sleep(self._every)
            try:
                self.check()
                failing = False
            except SvcError as exc:  # e.g. SVC_TRANSPORT naming nothing: said once, not every few seconds
                if not failing:
                    log.warning("the server's default cluster cannot be read: %s", exc)
                failing = True
