"""Atomic file writes with tight modes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from svc_host.errors import ConfigError


def write_temp(directory: Path, data: bytes, *, prefix: str, suffix: str, mode: int = 0o600) -> Path:
    """``data`` in a new file of ``directory`` with an unpredictable name (``mkstemp``), ``mode``, synced."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory, fsync, then rename."""
    tmp = write_temp(path.parent, data, prefix=f".{path.name}.", suffix=".tmp", mode=mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def publish_once(path: Path, text: str, *, what: str) -> None:
    """Create ``path`` holding ``text`` (mode 0600, synced) unless it exists. Two processes starting at once agree on
    one content: the file is published with a hard link, which fails when another process got there first, and the
    caller then reads that process's file. ``what`` names the file in a ``ConfigError``."""
    try:
        tmp = write_temp(path.parent, (text + "\n").encode(), prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigError(f"cannot create {what} {path}: {exc.strerror}") from None
    try:
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_private_text(path: Path, *, what: str) -> str:
    """The stripped text of a file only its owner may read; a copied or restored file readable by others is made
    0600 first. ``what`` names the file in a ``ConfigError``."""
    try:
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(0o600)
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from None


def json_bytes(value: Any) -> bytes:
    """Pretty JSON with a trailing newline, as svc writes its files."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def write_json_atomic(path: Path, value: Any, *, mode: int = 0o600) -> None:
    """``write_atomic`` of :func:`json_bytes`."""
    write_atomic(path, json_bytes(value), mode=mode)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<path>.lock`` (mode 0600) across a read-modify-write of ``path``, so
    processes changing the same file at once lose nothing; closing the descriptor releases it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


MAX_CONFIG_BYTES = 1 << 20
"""A config file larger than this is refused (they hold a few settings, never megabytes)."""


def read_config_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file ``path`` (at most ``MAX_CONFIG_BYTES``), ``None`` if there is none.

    Opened without blocking and checked on the open descriptor, so a FIFO, a device (``/dev/zero``) or a
    directory under a config file's name is a clear ``ConfigError``, never a hang or a MemoryError.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: not a regular file; a config file must be a plain JSON file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; a config file holds a few settings")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; a config file holds a few settings")
    return data


def parse_json_object(path: Path, data: bytes) -> dict[str, Any]:
    """The JSON object ``data`` (the content of ``path``); anything else is a ``ConfigError`` naming ``path``."""
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read the file: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: must hold a JSON object, not {type(value).__name__}")
    return value


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, ``None`` if there is no such file; anything else is a ``ConfigError``."""
    data = read_config_bytes(path)
    return None if data is None else parse_json_object(path, data)
