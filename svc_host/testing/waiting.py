"""Waiting in tests: for a condition under a deadline of seconds, never for a guessed sub-second pause.

A test that sleeps 0.1 s and then asserts that something happened fails on a machine whose cores are busy
with other work (a CI runner, a laptop compiling). Wait for the condition instead: :func:`eventually`
(coroutines) or :func:`eventually_blocking` (threads, subprocesses) poll it until it holds and fail with what
was last seen after ``DEADLINE`` seconds. Speed belongs in ``bench/``, not in a pass/fail margin.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Collection
from typing import TypeVar

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.transports.base import Transport

T = TypeVar("T")

DEADLINE = 60.0
"""Seconds to wait for what should happen at once: ample on a machine with a CPU hog on every core and other
work beside (starting a ``svc`` process alone has taken over 30 s on a 2-core machine at load 20)."""

INTERVAL = 0.01
"""Seconds between two looks at the condition."""


def _failure(what: str, timeout: float, last: object) -> AssertionError:
    return AssertionError(f"{what or 'the condition'} did not hold within {timeout:g} s; last seen: {last!r}")


async def eventually(
    check: Callable[[], Awaitable[T | None] | T | None],
    *,
    timeout: float = DEADLINE,
    interval: float = INTERVAL,
    what: str = "",
) -> T:
    """Call ``check`` (a function or a coroutine function) until it returns something truthy, and return that;
    raise ``AssertionError`` naming ``what`` and the last value after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        last = await value if inspect.isawaitable(value) else value
        if last:
            return last
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, last)
        await asyncio.sleep(interval)


def eventually_blocking(
    check: Callable[[], T], *, timeout: float = DEADLINE, interval: float = INTERVAL, what: str = ""
) -> T:
    """:func:`eventually` for code without an event loop: blocks the calling thread between looks."""
    deadline = time.monotonic() + timeout
    while not (last := check()):
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, last)
        time.sleep(interval)
    return last


async def wait_for_state(
    transport: Transport,
    job_id: str,
    states: Collection[JobState],
    *,
    timeout: float = 60.0,
    interval: float = 0.5,
) -> JobStatus:
    """Poll until the job reaches one of ``states``; fail with the last status seen on timeout."""
    seen: dict[str, JobStatus] = {}

    async def reached() -> JobStatus | None:
        status = (await transport.statuses([job_id])).get(job_id)
        if status is not None:
            seen[job_id] = status
        return status if status is not None and status.state in states else None

    try:
        return await eventually(reached, timeout=timeout, interval=interval)
    except AssertionError:
        last = seen.get(job_id)
        message = f"job {job_id} did not reach {sorted(states)} in {timeout:.0f} s; last seen: {last}"
        raise AssertionError(message) from None
