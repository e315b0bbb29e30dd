"""The per-(profile, mount) sync lock: an asyncio lock for tasks of this process plus ``flock`` for processes.

The lock is re-entrant within the task (and the tasks it spawns) that holds it, so the host can hold it
across "sync then submit" and still call ``sync``, which takes it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import re
import weakref
from collections.abc import AsyncIterator
from contextvars import ContextVar
from pathlib import Path

LockKey = tuple[str, str]
"""(profile name, mount name)."""

_POLL_MIN = 0.01
_POLL_MAX = 0.25

_process_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[LockKey, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)
_held: ContextVar[frozenset[LockKey]] = ContextVar("svc_rsync_held_locks", default=frozenset())


def lock_path(lock_dir: Path, key: LockKey) -> Path:
    """The lock file of ``key``: readable names plus a hash, since names may hold any character."""
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", "-".join(key))[:80]
    return lock_dir / f"{readable}-{digest}.lock"


def _process_lock(key: LockKey) -> asyncio.Lock:
    # asyncio locks belong to one event loop; keep one table per loop.
    loop = asyncio.get_running_loop()
    return _process_locks.setdefault(loop, {}).setdefault(key, asyncio.Lock())


async def _flock(path: Path) -> int:
    """Open and exclusively ``flock`` ``path``; polls without blocking the loop, so it stays cancellable."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    delay = _POLL_MIN
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, _POLL_MAX)
    except BaseException:
        os.close(fd)
        raise


@contextlib.asynccontextmanager
async def mount_lock(lock_dir: Path, key: LockKey) -> AsyncIterator[None]:
    """Hold the sync lock of ``key``: first among this process's tasks, then among processes."""
    if key in _held.get():
        yield
        return
    async with _process_lock(key):
        fd = await _flock(lock_path(lock_dir, key))
        token = _held.set(_held.get() | {key})
        try:
            yield
        finally:
            _held.reset(token)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
