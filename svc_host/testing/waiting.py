"""Waiting in tests: for a condition under a deadline of seconds, never for a guessed sub-second pause.

A test that sleeps 0.1 s and then asserts that something happened fails on a machine whose cores are busy
with other work (a CI runner, a laptop compiling). Wait for the condition instead: :func:`eventually`
(coroutines) or :func:`eventually_blocking` (threads, subprocesses) poll it until it holds and fail with what
was last seen after ``DEADLINE`` seconds. Speed belongs in ``bench/``, not in a pass/fail margin.

Either polls ``check`` alone (its answer holds when truthy) or, given ``until``, polls ``check`` for a value and
returns the first one ``until`` accepts: ``eventually(get_run, until=lambda run: run["status"] == "completed")``
then fails showing the last run seen rather than ``False``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Collection
from typing import TypeGuard, TypeVar, overload

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


def _holds(value: T | None, until: Callable[[T], object] | None) -> TypeGuard[T]:
    """Whether an answer of ``check`` ends the wait: truthy, or (given ``until``) not ``None`` and accepted."""
    if until is None:
        return bool(value)
    return value is not None and bool(until(value))


@overload
async def eventually(
    check: Callable[[], Awaitable[T | None]],
    *,
    until: Callable[[T], object] | None = None,
    timeout: float = DEADLINE,
    interval: float = INTERVAL,
    what: str = "",
) -> T: ...
@overload
async def eventually(
    check: Callable[[], T | None],
    *,
    until: Callable[[T], object] | None = None,
    timeout: float = DEADLINE,
    interval: float = INTERVAL,
    what: str = "",
) -> T: ...
async def eventually(
    check: Callable[[], Awaitable[T | None] | T | None],
    *,
    until: Callable[[T], object] | None = None,
    timeout: float = DEADLINE,
    interval: float = INTERVAL,
    what: str = "",
) -> T:
    """Call ``check`` (a function or a coroutine function) until its answer holds (is truthy, or is accepted by
    ``until``), and return that answer; raise ``AssertionError`` naming ``what`` and the last answer after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        last: T | None = await value if inspect.isawaitable(value) else value
        if _holds(last, until):
            return last
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, last)
        await asyncio.sleep(interval)


def eventually_blocking(
    check: Callable[[], T | None],
    *,
    until: Callable[[T], object] | None = None,
    timeout: float = DEADLINE,
    interval: float = INTERVAL,
    what: str = "",
) -> T:
    """:func:`eventually` for code without an event loop (threads, subprocesses, a server in another process):
    blocks the calling thread between looks."""
    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if _holds(last, until):
            return last
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, last)
        time.sleep(interval)


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
