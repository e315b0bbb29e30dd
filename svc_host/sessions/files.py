"""A session's files on the cluster, through the transport: written atomically with mode 0600, read as JSON.

Every command is an argv list; the path is a positional parameter of ``sh -c`` (``"$1"``), never part of the
script text, so no path can become shell syntax, over SSH (which quotes each word) or locally.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from svc_host.errors import TransportError
from svc_host.transports.base import CommandResult

_WRITE = 'umask 077 && cat > "$1.tmp" && mv -f "$1.tmp" "$1"'
MAX_JSON_BYTES = 65_536
"""The most of ``endpoint.json``/``exit.json`` read (a few dozen bytes when the guard wrote them)."""


@runtime_checkable
class SessionFiles(Protocol):
    """What a transport must offer to run sessions: commands and file reads on the cluster (every Slurm
    transport does); decided by what it has, not its name."""

    name: str

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult: ...

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None: ...

    async def login_dir(self) -> str: ...


async def make_private_dir(target: SessionFiles, path: str) -> None:
    """``mkdir -p`` with the last directory 0700 (others on the cluster must not list or read a session's files)."""
    await _check(target, ["sh", "-c", 'umask 077 && mkdir -p -- "$1"', "sh", path])


async def write_private(target: SessionFiles, path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, mode 0600: a reader sees all or nothing."""
    await _check(target, ["sh", "-c", _WRITE, "sh", path], stdin=text)


async def remove_tree(target: SessionFiles, path: str) -> None:
    """Remove a session's directory (a start that failed before its job was accepted); errors are ignored."""
    with contextlib.suppress(TransportError):
        await target.run(["rm", "-rf", "--", path], timeout=30)


async def read_json(target: SessionFiles, path: str) -> dict[str, Any] | None:
    """The JSON object at ``path``, or ``None`` while it is missing, partial or not an object."""
    found = await target.read_bytes(path, 0, MAX_JSON_BYTES)
    if found is None:
        return None
    try:
        value = json.loads(found[0])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def read_text(target: SessionFiles, path: str, limit: int) -> str | None:
    """The whole of a small text file (at most ``limit`` bytes), or ``None`` when missing."""
    found = await target.read_bytes(path, 0, limit)
    return None if found is None else found[0].decode(errors="replace")


async def _check(target: SessionFiles, argv: list[str], *, stdin: str | None = None) -> None:
    result = await target.run(argv, stdin=stdin, timeout=60)
    if result.exit_code != 0:
        raise TransportError(
            f"could not write a session file on transport {target.name!r}",
            argv=argv[:3],
            exit_code=result.exit_code,
            stderr=result.stderr,
        )
