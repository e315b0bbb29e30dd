"""Spawn to serving: the SDK loads in a thread while the main thread answers the client's opening frame.

``begin`` starts a thread that imports the server module and builds the server (``build``), then goes on warming
the Host (``warm``: the store and the plugin tables, all that its start imports), without cyclic garbage collection
until it is done (``_no_collection``); meanwhile the main thread reads
the first frame from fd 0 and writes ``opening.early_answer`` to fd 1 when svc can give it. Every byte read and
not answered for good is handed to the SDK as it came (``Handoff.consumed``): fed to the loop's reader when
``svc_host.mcp.stdio`` serves the pipes (so it can also drop the SDK's answer to a replayed ``initialize``), else
replayed through a pipe in front of the rest of stdin for the SDK's own transport (which then gets any
``initialize`` to answer itself).
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import os
import stat
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from svc_host.mcp.opening import Early, early_answer

T = TypeVar("T")
_FRAME_LIMIT = 1 << 20
"""Stop looking for the end of the first frame after this many bytes (the SDK then reads it whole)."""


@dataclass
class Handoff(Generic[T]):
    """What the SDK takes over: the bytes to read before fd 0, and the request among them that svc answered
    already (an ``initialize``: the SDK reads it, and its answer is held back)."""

    consumed: bytes
    answered: Early | None
    loaded: Callable[[], T]
    """The built server (waits for the loading thread; raises what building raised)."""


def begin(build: Callable[[], T], warm: Callable[[T], None]) -> Handoff[T]:
    """Load ``build()`` then ``warm(built)`` in a thread; answer the opening frame meanwhile."""
    sdk: Future[str | None] = Future()
    built: Future[T] = Future()

    def load() -> None:
        sdk.set_result(installed_sdk())
        with _no_collection():
            try:
                built.set_result(build())
            except Exception as exc:  # noqa: BLE001 - raised again in the main thread, by Handoff.loaded
                built.set_exception(exc)
                return
            with contextlib.suppress(Exception):  # the Host's start does it again, and a tool call reports it
                warm(built.result())

    # not a daemon: an interpreter that exits while a daemon thread imports is not safe
    threading.Thread(target=load, name="svc-mcp-load").start()
    served_by_loop = watchable(0) and watchable(1)
    data = _read_first_frame()
    frame, newline, rest = data.partition(b"\n")
    answered = early_answer(frame, sdk.result(), handshake=served_by_loop) if newline else None
    held_back = None
    if answered is not None:
        _write_all(1, answered.line)
        if answered.replay:
            held_back = answered
        else:
            data = rest
    if data and not served_by_loop:
        _replay(data)
        data = b""
    return Handoff(data, held_back, built.result)


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """No cyclic garbage collection while the modules load, then what they made is left out of every later one.

    Loading makes about 140,000 objects that live as long as the process (modules, classes, the SDK's and the
    ORM's models); each collection on the way walks them again, about a fifth of the loading's CPU time. Frozen
    (``gc.freeze``), they are never walked again, so later collections, during tool calls, are as short as the
    objects those calls make. The few thousand objects the imports left unreachable stay in memory with them."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def watchable(fd: int) -> bool:
    """A pipe or a socket: what a client connects, and what the loop can watch without touching anyone else's
    file (a terminal's non-blocking mode is the shell's too; a regular file is always "ready")."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def installed_sdk() -> str | None:
    """The version of the MCP SDK that ``import mcp`` will load, from the distribution's metadata directory beside
    it (``mcp-<version>.dist-info``; what ``importlib.metadata`` reads, without the scan of every path entry that
    makes it cost as much as the answer); None when there is not exactly one."""
    try:
        spec = importlib.util.find_spec("mcp")
        if spec is None or spec.origin is None:
            return None
        site = os.path.dirname(os.path.dirname(spec.origin))
        found = [name for name in os.listdir(site) if name.startswith("mcp-") and name.endswith(".dist-info")]
    except (ImportError, ValueError, OSError):  # the SDK will say what is wrong when it is imported
        return None
    return found[0].removeprefix("mcp-").removesuffix(".dist-info") if len(found) == 1 else None


def _read_first_frame() -> bytes:
    """Bytes from fd 0 up to the first newline (and whatever came with it), the end of input, or the limit."""
    data = b""
    while b"\n" not in data and len(data) < _FRAME_LIMIT:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        data += chunk
    return data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _replay(consumed: bytes) -> None:
    """Make fd 0 a pipe that gives ``consumed`` and then everything still to come on the real stdin."""
    read_end, write_end = os.pipe()
    source = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)

    def forward() -> None:
        try:
            _write_all(write_end, consumed)
            while chunk := os.read(source, 65536):
                _write_all(write_end, chunk)
        except OSError:  # the server closed its end: nobody reads any more
            pass
        finally:
            os.close(write_end)
            os.close(source)

    threading.Thread(target=forward, name="svc-mcp-stdin", daemon=True).start()
