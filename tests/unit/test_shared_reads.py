"""Shared reads: callers that arrive while a read runs share the next one, never an answer older than their call."""

from __future__ import annotations

import asyncio

import pytest

from svc_host.concurrency.shared_reads import SharedReads


class Store:
    """A value that changes, and a read of it that waits until the test lets it finish."""

    def __init__(self) -> None:
        self.value = 0
        self.reads = 0
        self.gates: list[asyncio.Event] = []
        self.begun = asyncio.Condition()

    async def read(self) -> int:
        self.reads += 1
        seen = self.value
        gate = asyncio.Event()
        async with self.begun:
            self.gates.append(gate)
            self.begun.notify_all()
        await gate.wait()
        return seen

    async def wait_begun(self, number: int) -> None:
        """Until ``number`` reads have begun."""
        async with self.begun:
            await self.begun.wait_for(lambda: len(self.gates) >= number)

    async def finish_read(self, number: int) -> None:
        """Let the ``number``-th read (1 is the first) finish, once it has begun."""
        await self.wait_begun(number)
        self.gates[number - 1].set()


async def test_callers_that_arrive_during_a_read_share_the_next_one_and_see_what_changed_before_it() -> None:
    reads: SharedReads[str, int] = SharedReads()
    store = Store()
    first = asyncio.create_task(reads.run("history", store.read))
    await store.wait_begun(1)
    store.value = 1  # written after the first read began: the callers below must see it
    later = [asyncio.create_task(reads.run("history", store.read)) for _ in range(5)]
    await store.finish_read(1)
    assert await first == 0
    await store.finish_read(2)
    assert await asyncio.gather(*later) == [1] * 5
    assert store.reads == 2
    assert await asyncio.gather(reads.run("history", store.read), store.finish_read(3)) == [1, None]


async def test_keys_do_not_share() -> None:
    reads: SharedReads[str, int] = SharedReads()
    store = Store()
    both = asyncio.gather(reads.run("a", store.read), reads.run("b", store.read))
    await store.finish_read(1)
    await store.finish_read(2)
    assert await both == [0, 0]
    assert store.reads == 2


async def test_a_caller_that_gives_up_leaves_the_read_to_the_others() -> None:
    reads: SharedReads[str, int] = SharedReads()
    store = Store()
    leaving = asyncio.create_task(reads.run("history", store.read))
    staying = asyncio.create_task(reads.run("history", store.read))
    await asyncio.sleep(0)
    leaving.cancel()
    await store.finish_read(1)
    assert await staying == 0
    with pytest.raises(asyncio.CancelledError):
        await leaving


async def test_a_failed_read_fails_every_caller_that_shared_it_and_the_next_read_runs_again() -> None:
    reads: SharedReads[str, int] = SharedReads()
    calls = 0

    async def broken() -> int:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        raise OSError("the store went away")

    results = await asyncio.gather(*(reads.run("history", broken) for _ in range(3)), return_exceptions=True)
    assert [type(result) for result in results] == [OSError] * 3
    assert calls == 1
    with pytest.raises(OSError, match="went away"):
        await reads.run("history", broken)
    assert calls == 2
