"""The per-(profile, mount) sync lock: an asyncio lock for tasks of this process plus ``flock`` for processes.

The lock is re-entrant within the task (and the tasks it spawns) that holds it, so the host can hold it
across "sync then submit" and still call ``sync``, which takes it too.

Waiting has a deadline (``LOCK_WAIT_SECONDS`` unless the backend is given another): a sync stuck behind another
process's gives up with a ``SyncError`` naming the holder (its pid and command) and since when it holds the
lock. The holder writes that record into the lock file itself (0600, in the user's state directory) once it
has the lock, and empties it before letting go.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import re
import sys
import weakref
from collections.abc import AsyncIterator
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path

from svc_host.plugin import SyncError

LockKey = tuple[str, str]
"""(profile name, mount name)."""

LOCK_WAIT_SECONDS = 1800.0
"""How long a sync waits for another sync of the same mount (30 min) before it gives up with the holder's name."""
_POLL_MIN = 0.01
_POLL_MAX = 0.25
_RECORD_LIMIT = 4096

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
async def mount_lock(lock_dir: Path, key: LockKey, *, wait: float = LOCK_WAIT_SECONDS) -> AsyncIterator[None]:
    """Hold the sync lock of ``key``: first among this process's tasks, then among processes; ``SyncError``
    naming the holder when it cannot be had within ``wait`` seconds."""
    if key in _held.get():
        yield
        return
    path = lock_path(lock_dir, key)
    process_lock = _process_lock(key)
    try:
        async with asyncio.timeout(wait):
            await process_lock.acquire()
            try:
                fd = await _flock(path)
            except BaseException:
                process_lock.release()
                raise
    except TimeoutError:
        raise SyncError(_busy_message(path, key, wait)) from None
    token = _held.set(_held.get() | {key})
    try:
        _write_record(fd)
        yield
    finally:
        _held.reset(token)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        process_lock.release()


def _write_record(fd: int) -> None:
    """Say who holds the lock, and since when, in the lock file (best effort: the lock works without it)."""
    command = " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:2]]) if sys.argv else ""
    record = {"pid": os.getpid(), "command": command[:200], "since": datetime.now(UTC).isoformat(timespec="seconds")}
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)


def holder(path: Path) -> str:
    """Who holds the lock at ``path`` as its record says (``another process`` when it says nothing)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            record = json.loads(os.read(fd, _RECORD_LIMIT))
        finally:
            os.close(fd)
        pid, command, since = int(record["pid"]), str(record["command"]), datetime.fromisoformat(record["since"])
    except (OSError, ValueError, TypeError, KeyError):
        return "another process (it left no record of itself)"
    who = "this process" if pid == os.getpid() else f"process {pid}"
    return f"{who} ({command!r}) since {since.strftime('%Y-%m-%d %H:%M:%S %Z')}"


def _busy_message(path: Path, key: LockKey, wait: float) -> str:
    profile, mount = key
    return (
        f"mount {mount!r} of profile {profile!r} is being synced by {holder(path)}; gave up waiting after "
        f"{wait:g} s. Try again once that sync is done, or stop that process if it is stuck"
    )
