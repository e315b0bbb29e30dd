"""The one way tests wait (``svc_host.testing.waiting``): for a condition, under a deadline, saying what was awaited
and what was last seen when it did not come; the same for coroutines and for blocking code."""

from __future__ import annotations

import itertools
import threading

import pytest

from svc_host.testing.waiting import eventually, eventually_blocking


async def test_eventually_returns_the_first_truthy_answer_of_a_function_or_a_coroutine() -> None:
    counter = itertools.count()
    assert await eventually(lambda: next(counter) >= 3 and "ready") == "ready"

    answers = iter([None, {"status": "running"}, {"status": "done"}])

    async def fetch() -> dict[str, str] | None:
        return next(answers)

    assert await eventually(fetch, until=lambda body: body["status"] == "done") == {"status": "done"}


async def test_eventually_fails_after_the_deadline_naming_what_and_the_last_answer() -> None:
    with pytest.raises(AssertionError, match=r"^run 7 reaching done did not hold within 0.05 s; last seen: "):
        await eventually(lambda: {"status": "running"}, until=lambda body: body["status"] == "done",
                         timeout=0.05, what="run 7 reaching done")  # fmt: skip
    with pytest.raises(AssertionError, match=r"^the condition did not hold within 0.05 s; last seen: \[\]$"):
        await eventually(list, timeout=0.05)


async def test_until_accepts_a_falsy_answer_but_never_none() -> None:
    assert await eventually(list, until=lambda found: found == []) == []  # an empty list is an answer here
    with pytest.raises(AssertionError, match=r"last seen: None$"):
        await eventually(lambda: None, until=lambda found: True, timeout=0.05)


def test_eventually_blocking_waits_for_another_thread() -> None:
    seen: list[str] = []
    threading.Timer(0.05, seen.append, ["written"]).start()
    assert eventually_blocking(lambda: list(seen), what="the other thread's write") == ["written"]
    assert eventually_blocking(lambda: len(seen), until=lambda count: count == 1) == 1


def test_eventually_blocking_fails_after_the_deadline_naming_what_and_the_last_answer() -> None:
    with pytest.raises(AssertionError, match=r"^the agent's answer did not hold within 0.05 s; last seen: 0$"):
        eventually_blocking(lambda: 0, until=lambda count: count > 0, timeout=0.05, what="the agent's answer")
