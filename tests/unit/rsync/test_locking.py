"""The per-mount lock: tasks and processes serialise; the holder may re-enter; waiting never blocks the loop."""

from __future__ import annotations

import asyncio
import fcntl
import os
from pathlib import Path

import pytest

from svc_host.testing.waiting import DEADLINE
from svc_plugin_rsync.locking import lock_path, mount_lock

KEY = ("dev", "proj")


async def test_tasks_serialise(tmp_path: Path) -> None:
    events: list[str] = []

    async def worker(name: str) -> None:
        async with mount_lock(tmp_path, KEY):
            events.append(f"{name} in")
            await asyncio.sleep(0.05)
            events.append(f"{name} out")

    await asyncio.gather(worker("a"), worker("b"))
    assert events in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])


async def test_other_mounts_do_not_wait(tmp_path: Path) -> None:
    async with mount_lock(tmp_path, KEY):
        await asyncio.wait_for(_enter(tmp_path, ("dev", "other")), DEADLINE)


async def _enter(lock_dir: Path, key: tuple[str, str]) -> None:
    async with mount_lock(lock_dir, key):
        pass


async def test_holder_re_enters(tmp_path: Path) -> None:
    async with mount_lock(tmp_path, KEY):
        await asyncio.wait_for(_enter(tmp_path, KEY), DEADLINE)


async def test_flock_held_elsewhere_is_awaited_without_blocking_the_loop(tmp_path: Path) -> None:
    path = lock_path(tmp_path, KEY)
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
        async with mount_lock(tmp_path, KEY):
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
    assert path.parent == tmp_path
    assert path.name.endswith(".lock")
    assert lock_path(tmp_path, ("a-b", "c")) != lock_path(tmp_path, ("a", "b-c"))
