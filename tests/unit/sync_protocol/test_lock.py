"""The public sync lock: tasks and processes serialise; the holder and what it spawns may re-enter; waiting never
blocks the loop."""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.errors import SyncError
from svc_host.plugin import sync_lock
from svc_host.testing.waiting import DEADLINE
from svc_host.transports.sync_lock import lock_path

KEY = ("dev", "proj")


async def test_tasks_serialise(tmp_path: Path) -> None:
    events: list[str] = []

    async def worker(name: str) -> None:
        async with sync_lock(*KEY, state_dir=tmp_path):
            events.append(f"{name} in")
            await asyncio.sleep(0.05)
            events.append(f"{name} out")

    await asyncio.gather(worker("a"), worker("b"))
    assert events in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])


async def test_other_mounts_do_not_wait(tmp_path: Path) -> None:
    async with sync_lock(*KEY, state_dir=tmp_path):
        await asyncio.wait_for(_enter(tmp_path, ("dev", "other")), DEADLINE)


async def _enter(lock_dir: Path, key: tuple[str, str]) -> None:
    async with sync_lock(*key, state_dir=lock_dir):
        pass


async def test_holder_re_enters(tmp_path: Path) -> None:
    async with sync_lock(*KEY, state_dir=tmp_path):
        await asyncio.wait_for(_enter(tmp_path, KEY), DEADLINE)


async def test_flock_held_elsewhere_is_awaited_without_blocking_the_loop(tmp_path: Path) -> None:
    path = lock_path(tmp_path, KEY)
    path.parent.mkdir()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # another open file description: like another process
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        waiter = asyncio.create_task(_enter(tmp_path, KEY))
        ticks = 0
        for _ in range(10):
            await asyncio.sleep(0.02)
            ticks += 1
        assert ticks == 10
        assert not waiter.done()
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    await asyncio.wait_for(waiter, DEADLINE)


async def test_cancelled_waiter_leaves_the_lock_usable(tmp_path: Path) -> None:
    entered = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with sync_lock(*KEY, state_dir=tmp_path):
            entered.set()
            await release.wait()

    held = asyncio.create_task(holder())
    await entered.wait()
    waiter = asyncio.create_task(_enter(tmp_path, KEY))
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await held
    await asyncio.wait_for(_enter(tmp_path, KEY), DEADLINE)


def test_lock_path_is_safe_for_any_name(tmp_path: Path) -> None:
    path = lock_path(tmp_path, ("../../etc", "a/b c"))
    assert path.parent == tmp_path / "locks"
    assert path.name.endswith(".lock")
    assert lock_path(tmp_path, ("a-b", "c")) != lock_path(tmp_path, ("a", "b-c"))


HOLD = """
import asyncio, sys
from pathlib import Path
from svc_host.plugin import sync_lock

async def main():
    async with sync_lock("dev", "proj", state_dir=Path(sys.argv[1])):
        print("held", flush=True)
        sys.stdin.read()

asyncio.run(main())
"""


async def test_a_sync_held_by_another_process_is_waited_for_until_the_deadline_then_named(tmp_path: Path) -> None:
    other = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLD, str(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert other.stdout is not None
    assert other.stdin is not None
    try:
        assert await asyncio.wait_for(other.stdout.readline(), timeout=60) == b"held\n"
        with pytest.raises(SyncError) as caught:
            await _enter_within(tmp_path, 1.0)
    finally:
        other.stdin.close()
        assert await asyncio.wait_for(other.wait(), timeout=60) == 0
    message = str(caught.value)
    assert message.startswith(f"mount 'proj' of profile 'dev' is being synced by process {other.pid} ('-c ")
    assert re.search(r"\) since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC; gave up waiting after 1 s\. Try again", message)
    await asyncio.wait_for(_enter_within(tmp_path, 1.0), timeout=10)  # free again, and the record is gone
    assert lock_path(tmp_path, KEY).read_bytes() == b""


async def test_a_task_of_this_process_holding_the_lock_is_named_at_the_deadline(tmp_path: Path) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        async with sync_lock(*KEY, state_dir=tmp_path):
            entered.set()
            await release.wait()

    held = asyncio.create_task(holder())
    await entered.wait()
    with pytest.raises(SyncError, match=r"is being synced by this process \("):
        await _enter_within(tmp_path, 0.5)
    release.set()
    await held
    await asyncio.wait_for(_enter_within(tmp_path, 0.5), timeout=10)


async def test_a_holder_that_left_no_record_is_still_reported(tmp_path: Path) -> None:
    path = lock_path(tmp_path, KEY)
    path.parent.mkdir()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(SyncError, match=r"by another process \(it left no record of itself\); gave up"):
            await _enter_within(tmp_path, 0.5)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


async def _enter_within(lock_dir: Path, wait: float) -> None:
    async with sync_lock(*KEY, state_dir=lock_dir, wait=wait):
        pass


async def test_a_task_spawned_by_the_holder_re_enters_and_a_sibling_waits(tmp_path: Path) -> None:
    """The ContextVar rule: a task created while the lock is held shares the holding; one created before waits."""
    release = asyncio.Event()

    async def sibling_body() -> None:
        await release.wait()
        await _enter(tmp_path, KEY)

    sibling = asyncio.create_task(sibling_body())  # created before the lock is taken
    async with sync_lock(*KEY, state_dir=tmp_path):
        await asyncio.wait_for(asyncio.create_task(_enter(tmp_path, KEY)), DEADLINE)
        release.set()
        await asyncio.sleep(0.05)
        assert not sibling.done()  # waiting for the holder, not let in
    await asyncio.wait_for(sibling, DEADLINE)


async def test_a_spawned_task_that_outlives_the_holding_waits_like_anyone(tmp_path: Path) -> None:
    go, entered = asyncio.Event(), asyncio.Event()

    async def late() -> None:
        await go.wait()
        async with sync_lock(*KEY, state_dir=tmp_path):
            entered.set()

    async with sync_lock(*KEY, state_dir=tmp_path):
        child = asyncio.create_task(late())  # inherits the holding, which ends below
    release_other = asyncio.Event()

    async def other_holder() -> None:
        async with sync_lock(*KEY, state_dir=tmp_path):
            go.set()
            await release_other.wait()

    holder_task = asyncio.create_task(other_holder())
    await asyncio.wait_for(go.wait(), DEADLINE)
    await asyncio.sleep(0.05)
    assert not entered.is_set()  # the ended holding lets nobody in
    release_other.set()
    await asyncio.wait_for(asyncio.gather(holder_task, child), DEADLINE)
    assert entered.is_set()
