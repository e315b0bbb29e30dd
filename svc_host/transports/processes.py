"""Local processes started from asyncio so that giving up on one never hangs.

Python 3.11's asyncio waits forever on a process whose start was cancelled before its pipes were connected. So a
start is never cancelled half-way: a caller that gives up leaves it to finish, and the process is killed then.
An event loop's shutdown cancels every task still running, such a start included, so whoever starts processes
closes its ``ProcessStarts`` before the loop ends (transports and sync backends do in ``close``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from typing import Any

Process = asyncio.subprocess.Process


class ProcessStarts:
    """The local processes one owner (a transport, a sync backend) starts; ``close`` waits for the starts whose
    caller gave up, and for those processes, killed, to end."""

    def __init__(self) -> None:
        self._reapers: set[asyncio.Task[None]] = set()

    async def start(self, argv: Sequence[str], *, own_group: bool = False, **options: Any) -> Process:
        """``asyncio.create_subprocess_exec(*argv, **options)``, safe to cancel. ``own_group``: in a session of its
        own, so that ``kill(proc, group=True)`` kills what it started too (and a terminal's Ctrl-C does not)."""
        starting = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, start_new_session=own_group, **options))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            reaper = asyncio.ensure_future(_reap(starting, group=own_group))
            self._reapers.add(reaper)
            reaper.add_done_callback(self._reapers.discard)
            raise

    async def close(self) -> None:
        """Wait for the starts callers gave up on, and for those processes to end; before the event loop ends."""
        await asyncio.gather(*self._reapers, return_exceptions=True)


def kill(proc: Process, *, group: bool = False) -> None:
    """Kill a process; ``group``: with what it started (it was started with ``own_group``), also once it ended
    itself, since a child left holding its pipes would keep ``wait()`` blocked for the child's lifetime."""
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()


async def _reap(starting: asyncio.Future[Process], *, group: bool) -> None:
    """Let a start nobody waits for finish, then kill the process and wait for its end."""
    try:
        proc = await asyncio.shield(starting)
    except OSError:  # it could not start: nothing to kill
        return
    kill(proc, group=group)
    await proc.wait()
