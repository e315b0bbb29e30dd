"""The background tasks plugins ask a server to run (``svc_background_tasks``), owned by the ``Host``."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging

from svc_host.plugin_core.records import TaskSpec

log = logging.getLogger(__name__)


class PluginTasks:
    """Runs each ``TaskSpec`` as one asyncio task from ``start`` until ``stop``; a crash is logged, not retried."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def start(self, specs: list[TaskSpec]) -> None:
        for spec in specs:
            if spec.name in self._tasks and not self._tasks[spec.name].done():
                continue
            task: asyncio.Task[None] = asyncio.create_task(spec.run(), name=f"svc-plugin-{spec.name}")
            task.add_done_callback(functools.partial(_log_end, spec.name))
            self._tasks[spec.name] = task

    def names(self) -> list[str]:
        """The tasks running now."""
        return sorted(name for name, task in self._tasks.items() if not task.done())

    async def stop(self) -> None:
        tasks, self._tasks = list(self._tasks.values()), {}
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _log_end(name: str, task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("plugin background task %s crashed", name, exc_info=task.exception())
