"""Values computed from files, kept while the files are unchanged: a ``stat`` per file instead of a read and a parse.

A file's signature is what ``stat`` says of it (inode, size, modification and change times, in nanoseconds), or
``None`` when it does not exist. An atomic write (a new file renamed over the old) changes the inode; an edit in
place changes the times. A file changed again within the file system's clock tick could keep its times and size,
so a value is only kept when every file it came from is older than ``SETTLE_SECONDS`` (git's "racily clean"
rule): until then every call computes the value afresh.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
Signature = tuple[int, int, int, int] | None

SETTLE_SECONDS = 2.0
"""A file modified less than this long ago may change again without its signature changing."""


def signature(path: Path | str) -> Signature:
    """``(inode, size, mtime_ns, ctime_ns)`` of ``path``, ``None`` when it is missing (or not reachable)."""
    try:
        found = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def settled(signatures: Iterable[Signature], now: float | None = None) -> bool:
    """True when no file of ``signatures`` changed within the last ``SETTLE_SECONDS``."""
    limit = int(((time.time() if now is None else now) - SETTLE_SECONDS) * 1e9)
    return all(sig is None or (sig[2] < limit and sig[3] < limit) for sig in signatures)


class FileMemo(Generic[T]):
    """At most ``size`` values, each under a key that holds the signatures of the files it was computed from.

    A value is found only under the same key, so a changed file (a new signature) is a miss: nothing needs to be
    told about the change. Thread-safe: routes call it from worker threads."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: Hashable, value: T, signatures: Iterable[Signature]) -> None:
        """Keep ``value`` unless one of its files changed too recently to be trusted (see the module docstring)."""
        if not settled(signatures):
            return
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
