"""Which project config files the user trusts, by content: a ``.svc.json`` is read only once trusted.

A project config sits in a directory anyone may have written (a cloned repository), and it can redirect chat
notifications, move logs or set environment variables of every job. So, like direnv and git's
``safe.directory``, svc ignores it until the user runs ``svc config trust [DIR]``, which stores the file's
SHA-256 in ``trusted-projects.json`` of the user config directory (atomically, mode 0600). A file whose content
has changed since is ignored again until it is trusted again. An ignored file is announced once per process
and content, on the ``svc.config`` logger (stderr for the CLI, the log for servers).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from svc_host.settings.files import locked, read_json_object, write_json_atomic
from svc_host.settings.paths import SvcPaths

log = logging.getLogger("svc.config")
_announced: set[tuple[str, str]] = set()


def store_file(paths: SvcPaths) -> Path:
    """Where trusted project files are recorded."""
    return paths.user_config_dir / "trusted-projects.json"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trust_key(path: Path) -> str:
    """A project file is known by its real directory and its name (a symlinked checkout is the same project)."""
    return str(path.parent.resolve() / path.name)


def is_trusted(paths: SvcPaths, path: Path, data: bytes) -> bool:
    """Whether the user trusted ``path`` with exactly this content."""
    stored = read_json_object(store_file(paths)) or {}
    return stored.get(trust_key(path)) == digest(data)


def record(paths: SvcPaths, path: Path, data: bytes) -> None:
    """Trust ``path`` with this content (replacing what was trusted before)."""
    store = store_file(paths)
    with locked(store):
        stored = read_json_object(store) or {}
        stored[trust_key(path)] = digest(data)
        write_json_atomic(store, stored)


def forget(paths: SvcPaths, directory: Path, names: tuple[str, ...]) -> list[str]:
    """Stop trusting the project files ``names`` of ``directory``; the files that were trusted."""
    store = store_file(paths)
    keys = [trust_key(directory / name) for name in names]
    with locked(store):
        stored = read_json_object(store) or {}
        removed = [key for key in keys if stored.pop(key, None) is not None]
        if removed:
            write_json_atomic(store, stored)
    return removed


def ignored_reason(path: Path) -> str:
    """The one-line notice for an untrusted (or changed) project file."""
    return (
        f"ignoring project config {path}: it is not trusted or changed since; read it, then run "
        f"'svc config trust {path.parent}' to use it"
    )


def announce_ignored(path: Path, data: bytes) -> str:
    """Log the notice for ``path`` once per process and content; return it."""
    reason = ignored_reason(path)
    key = (trust_key(path), digest(data))
    if key not in _announced:
        _announced.add(key)
        log.warning("%s", reason)
    return reason


def announce_unreadable(path: Path, problem: str) -> str:
    """Log, once per process and problem, that the project file ``path`` is skipped as unreadable; return it."""
    reason = f"ignoring project config {path}: {problem.removeprefix(f'{path}: ')}"
    key = (trust_key(path), digest(problem.encode()))
    if key not in _announced:
        _announced.add(key)
        log.warning("%s", reason)
    return reason
