"""The per-(profile, mount) sync lock every backend holds: an asyncio lock among this process's tasks, then
``flock`` among processes.

Re-entrancy, exactly: a task that holds the lock, and a task it creates while holding it (asyncio copies the
creating task's ``contextvars`` context, Python 3.11 included), may take it again without waiting, so the host
can hold it across "sync then submit" and still call ``sync``, which takes it too. A task created before the lock
was taken, or by another task, waits; so does a task created while it was held once the holder has let go (what
it inherited is a holding that ended). Another thread or event loop waits like another process.

Waiting has a deadline (``SYNC_LOCK_WAIT`` unless given another): a sync stuck behind another process's gives up
with a ``SyncError`` naming the holder (its pid and command) and since when it holds the lock. The holder writes
that record into the lock file itself (0600, in ``<state_dir>/locks``) once it has the lock, and empties it
before letting go. Every backend of a profile shares the file, so switching backends keeps syncs apart.
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
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path

from svc_host.errors import SyncError

SYNC_LOCK_WAIT = 1800.0
"""How long a sync waits for another sync of the same mount (30 min) before it gives up naming the holder."""
_POLL_MIN = 0.01
_POLL_MAX = 0.25
_RECORD_LIMIT = 4096

LockKey = tuple[str, str]
"""(profile name, mount name)."""


class _Holding:
    """One acquisition of a lock: live until its holder lets go."""

    def __init__(self, key: LockKey) -> None:
        self.key = key
        self.live = True


_process_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[LockKey, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)
_holdings: ContextVar[tuple[_Holding, ...]] = ContextVar("svc_sync_lock_holdings", default=())


def lock_path(state_dir: Path, key: LockKey) -> Path:
    """The lock file of ``key``: readable names plus a hash, since names may hold any character."""
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", "-".join(key))[:80]
    return state_dir / "locks" / f"{readable}-{digest}.lock"


def sync_lock(
    profile: str, mount: str, *, state_dir: Path | None = None, wait: float = SYNC_LOCK_WAIT
) -> AbstractAsyncContextManager[None]:
    """The sync lock of ``mount`` of ``profile`` (what ``SyncBackend.lock`` returns): ``async with
    sync_lock(profile, mount.name): ...``. ``state_dir`` defaults to svc's state directory."""
    if state_dir is None:
        from svc_host.settings.paths import SvcPaths

        state_dir = SvcPaths.from_env().state_dir
    return _held(lock_path(state_dir, (profile, mount)), (profile, mount), wait)


def _holds(key: LockKey) -> bool:
    return any(holding.live and holding.key == key for holding in _holdings.get())


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
async def _held(path: Path, key: LockKey, wait: float) -> AsyncIterator[None]:
    if _holds(key):
        yield
        return
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
    holding = _Holding(key)
    token = _holdings.set((*_holdings.get(), holding))
    try:
        _write_record(fd)
        yield
    finally:
        holding.live = False
        _holdings.reset(token)
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
