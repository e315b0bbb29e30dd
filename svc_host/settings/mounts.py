"""Mounts: finding one in a profile, placing a job's paths on the cluster, and the local boundary of browse/read.

Path translation (``cluster_paths``) is the one place where ``transport`` + ``mount`` turn a job's
``work_dir`` and ``log_dir`` into cluster paths; submit and workflows both use it. The boundary functions
(``resolve_inside``, ``list_directory``, ``read_file``) serve REST browse/read and ``svc files``; their
errors never contain a local path, only the mount name and the caller's own relative path once it is
known to stay inside the mount.
"""

from __future__ import annotations

import errno
import itertools
import os
import posixpath
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from svc_host.domain.profiles import Mount, SSHProfile, cluster_root
from svc_host.errors import InvalidRequestError, NotFoundError, SvcError
from svc_host.settings.paths import SvcPaths

MAX_READ_BYTES = 1024 * 1024
"""``GET /api/files/read`` refuses files larger than this (1 MB) with 413."""
MAX_BROWSE_ENTRIES = 5000
"""A listing looks at most at this many entries of a directory; more make it ``truncated``."""
MAX_PATH_BYTES = 4096
LOCAL = "local"


class PathForbiddenError(SvcError):
    """A path leaves its mount's root (``..``, absolute, a symlink pointing out) or may not be read."""


class FileTooLargeError(SvcError):
    """A file is larger than the read limit."""


# -- finding a mount ----------------------------------------------------------------------------------------


def find_mount(profiles: Mapping[str, SSHProfile], profile: str, name: str) -> Mount:
    """The mount ``name`` of the SSH profile ``profile``; ``NotFoundError`` naming what is missing."""
    if profile not in profiles:
        known = ", ".join(repr(known) for known in sorted(profiles)) or "none"
        raise NotFoundError(f"SSH profile {profile!r} not found; known profiles: {known}")
    for mount in profiles[profile].mounts:
        if mount.name == name:
            return mount
    raise NotFoundError(f"Mount '{name}' not found in profile '{profile}'")


# -- path translation ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterPaths:
    """Where a job runs and logs on the cluster.

    ``work_dir`` and ``log_dir`` are cluster locations (relative ones are relative to the login directory,
    like ``mount.remote``); ``job_log_dir`` is ``log_dir`` as ``JobDefinition.log_dir`` takes it (absolute,
    or relative to ``work_dir``).
    """

    work_dir: str | None
    log_dir: str
    job_log_dir: str


class MountCapable(Protocol):
    """What ``cluster_paths`` reads of a transport's spec (``TransportSpec``): its name and whether it has mounts."""

    @property
    def name(self) -> str: ...

    @property
    def mounts(self) -> bool: ...


def mount_profile(transport: MountCapable) -> str:
    """The SSH profile whose mounts and sync backend ``transport`` uses: the one its spec names (``mounts_of``, a
    transport built on a profile's), else the profile of its own name."""
    return getattr(transport, "mounts_of", None) or transport.name


def cluster_paths(
    profiles: Mapping[str, SSHProfile],
    transport: MountCapable | None,
    mount: str | None,
    *,
    work_dir: str | None,
    log_dir: str,
) -> ClusterPaths:
    """Translate a job's ``work_dir`` and ``log_dir`` with ``mount`` of ``transport`` as the root.

    Without ``mount`` the paths are used as given. With it:

    * a relative path is relative to the mount's root on the cluster (``mount.remote``); ``..`` may not
      climb above that root;
    * an absolute path under the mount's local directory is the same path under ``mount.remote`` (the
      copy ``sync_files`` made);
    * any other absolute path is a cluster path and stays as it is;
    * no ``work_dir`` means the mount's root.

    When ``mount.remote`` is relative (to the login directory) and ``work_dir`` an absolute path outside
    the mount, a relative ``log_dir`` stays relative to ``work_dir``: the job could not find a
    login-relative log directory from there.
    """
    if mount is None:
        return ClusterPaths(work_dir=work_dir, log_dir=log_dir, job_log_dir=log_dir)
    if transport is None or not transport.mounts:
        raise InvalidRequestError(
            "mount requires an SSH transport; pass transport='<profile>' (local runs have no mount "
            "translation: work_dir and log_dir are used as given on this machine)"
        )
    found = find_mount(profiles, mount_profile(transport), mount)
    root = cluster_root(found.remote)  # the Mount model already refused the forms it cannot express
    work = root if work_dir is None else _place(found, root, work_dir, "work_dir")
    log = _place(found, root, log_dir, "log_dir")
    if posixpath.isabs(log):
        job_log = log
    elif posixpath.isabs(work):
        job_log = log_dir
    else:
        job_log = _relative(log, work)
    return ClusterPaths(work_dir=work, log_dir=log, job_log_dir=job_log)


def _place(mount: Mount, root: str, path: str, what: str) -> str:
    if posixpath.isabs(path):
        local = mount.local.rstrip("/") or "/"
        if path == local or path.startswith(local + "/"):
            return posixpath.normpath(posixpath.join(root, path[len(local) :].lstrip("/") or "."))
        return path
    relative = posixpath.normpath(path)
    if relative == ".." or relative.startswith("../"):
        raise InvalidRequestError(
            f"{what} {path!r} climbs above the root of mount {mount.name!r}; give a path inside the mount, "
            "or an absolute path on the cluster"
        )
    return posixpath.normpath(posixpath.join(root, relative))


def _relative(path: str, start: str) -> str:
    """``path`` relative to ``start``, both normalised relative paths (purely lexical)."""
    target = [part for part in path.split("/") if part not in ("", ".")]
    base = [part for part in start.split("/") if part not in ("", ".")]
    common = 0
    while common < min(len(target), len(base)) and target[common] == base[common]:
        common += 1
    parts = [".."] * (len(base) - common) + target[common:]
    return "/".join(parts) or "."


# -- what no mount may reach --------------------------------------------------------------------------------


def guarded_paths(paths: SvcPaths, home: str | None = None) -> tuple[str, ...]:
    """The local places a mount's root may not be, be inside of, or hold: svc's state directory (the token file,
    the store), its config directory (profiles, secrets) and the user's SSH keys (``~/.ssh``).

    A browser session may add mounts and read files under them; a root that reached these would hand the
    session the permanent API token or the user's keys, which outlive the session."""
    home = home if home is not None else os.path.expanduser("~")
    places = (paths.state_dir, paths.user_config_dir, paths.api_token_file, os.path.join(home, ".ssh"))
    return tuple(os.path.realpath(place) for place in places)


def refuse_guarded_root(mount: Mount, guarded: tuple[str, ...]) -> None:
    """``PathForbiddenError`` when ``mount.local`` (every symlink resolved) is one of ``guarded``, lies inside one,
    or contains one: a mount of ``~`` would hold ``~/.ssh`` as much as a mount of ``~/.ssh`` itself."""
    root = os.path.realpath(os.path.expanduser(mount.local))
    if any(is_inside(place, root) or is_inside(root, place) for place in guarded):
        raise PathForbiddenError(
            f"the local directory of mount {mount.name!r} is, holds or lies inside svc's state or config directory "
            "or ~/.ssh; mount a project directory instead"
        )


# -- the local boundary -------------------------------------------------------------------------------------


def is_inside(root: str, path: str) -> bool:
    """True when the (resolved) ``path`` is ``root`` or below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def clean_relative(relative: str) -> str:
    """The caller's relative path normalised (``""`` for the root), or the error for a hostile one.

    NUL and over-long paths are invalid input; absolute paths and ``..`` climbing above the root at any
    point are forbidden. Nothing is decoded: the value is taken literally (query strings arrive decoded once).
    """
    if "\0" in relative:
        raise InvalidRequestError("path contains a NUL byte")
    if len(relative.encode(errors="surrogateescape")) > MAX_PATH_BYTES:
        raise InvalidRequestError(f"path is longer than {MAX_PATH_BYTES} bytes")
    if relative.startswith("/"):
        raise PathForbiddenError("path must be relative to the mount root; absolute paths are not allowed")
    parts: list[str] = []
    for part in relative.split("/"):
        if part == "..":
            if not parts:
                raise PathForbiddenError("path is outside the mount")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def resolve_inside(root: str, relative: str) -> str:
    """The real path of ``relative`` under ``root``, every symlink resolved; ``PathForbiddenError`` when it
    leaves ``root``. The result need not exist."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, clean_relative(relative)))
    if not is_inside(real_root, real):
        raise PathForbiddenError("path is outside the mount")
    return real


@dataclass(frozen=True)
class BrowseEntry:
    """One entry of a listing. Symlinks carry ``accessible`` and ``target_kind``; a symlink out of the
    mount (or dangling) is inaccessible and its target is never looked at, so ``target_kind`` is ``None``."""

    name: str
    type: Literal["file", "directory", "symlink"]
    size: int | None
    accessible: bool | None = None
    target_kind: Literal["file", "directory"] | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "type": self.type, "size": self.size}
        if self.type == "symlink":
            body.update(accessible=self.accessible, target_kind=self.target_kind)
        return body

    @property
    def sort_key(self) -> tuple[bool, str, str]:
        is_dir = self.type == "directory" or self.target_kind == "directory"
        return (not is_dir, self.name.casefold(), self.name)


@dataclass(frozen=True)
class Listing:
    """What ``list_directory`` found; ``truncated`` when the directory holds more than the limit let it read."""

    entries: list[BrowseEntry]
    truncated: bool


def list_directory(mount: Mount, relative: str, *, limit: int = MAX_BROWSE_ENTRIES) -> Listing:
    """The entries of a directory under the mount: directories first, then by name (case-insensitive).

    At most ``limit`` directory entries are read, in the order the filesystem gives them; when there are more
    the listing is ``truncated`` (those read are still sorted). FIFOs, sockets and devices count but are left
    out. A name that is not valid UTF-8 is shown with U+FFFD. The directory is opened without following a
    final symlink and the opened directory is checked again to be inside the mount (see ``read_file``).
    """
    shown = clean_relative(relative)
    real_root = _mount_root(mount)
    where = _where(mount, shown)
    fd = _open_inside(real_root, shown, where, directory=True)
    try:
        opened = _check_opened(fd, real_root, shown)
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise InvalidRequestError(f"{where} is not a directory")
        with os.scandir(fd) as scan:
            items = list(itertools.islice(scan, limit + 1))
        entries = [entry for entry in (_entry(real_root, opened, item) for item in items[:limit]) if entry]
    except PermissionError:
        raise PathForbiddenError(f"permission denied: {where}") from None
    except OSError as exc:
        raise _os_error(exc, where) from None
    finally:
        os.close(fd)
    return Listing(sorted(entries, key=lambda entry: entry.sort_key), truncated=len(items) > limit)


def _entry(real_root: str, directory: str, item: os.DirEntry[str]) -> BrowseEntry | None:
    name = item.name.encode(errors="surrogateescape").decode(errors="replace")
    try:
        if item.is_symlink():
            target = os.path.realpath(os.path.join(directory, item.name))
            if not is_inside(real_root, target):
                return BrowseEntry(name, "symlink", None, accessible=False)
            mode = os.stat(target).st_mode if os.path.exists(target) else 0
            kind: Literal["file", "directory"] | None = (
                "directory" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None
            )
            return BrowseEntry(name, "symlink", None, accessible=kind is not None, target_kind=kind)
        info = item.stat(follow_symlinks=False)
    except OSError:
        return None  # vanished while listing
    if stat.S_ISDIR(info.st_mode):
        return BrowseEntry(name, "directory", None)
    if stat.S_ISREG(info.st_mode):
        return BrowseEntry(name, "file", info.st_size)
    return None


def read_file(mount: Mount, relative: str, *, limit: int | None = MAX_READ_BYTES) -> bytes:
    """The bytes of a regular file under the mount; ``FileTooLargeError`` past ``limit``.

    The file is opened without following a final symlink and without blocking, and the opened file is
    checked again to be inside the mount, so a path swapped for a symlink mid-request is refused too.
    """
    shown = clean_relative(relative)
    if not shown:
        raise InvalidRequestError(f"the root of mount {mount.name!r} is a directory, not a file")
    real_root = _mount_root(mount)
    where = _where(mount, shown)
    fd = _open_inside(real_root, shown, where, directory=False)
    try:
        _check_opened(fd, real_root, shown)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidRequestError(f"{where} is not a file")
        if limit is not None and info.st_size > limit:
            raise FileTooLargeError(f"{where} is {info.st_size} bytes, over the {limit} byte read limit")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise FileTooLargeError(f"{where} grew past the {limit} byte read limit while being read")
    return data


def _open_inside(real_root: str, shown: str, where: str, *, directory: bool) -> int:
    """Open the resolved ``shown`` for reading without following a final symlink (one swapped in is refused,
    ``ELOOP``) and without blocking; ``directory`` words the error for a file in the path."""
    real = resolve_inside(real_root, shown)
    try:
        return os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise NotFoundError(f"{where} not found") from None
    except NotADirectoryError as exc:
        if directory:
            raise InvalidRequestError(f"{where} is not a directory") from None
        raise _os_error(exc, where) from None
    except PermissionError:
        raise PathForbiddenError(f"permission denied: {where}") from None
    except OSError as exc:
        raise _os_error(exc, where) from None


def _check_opened(fd: int, real_root: str, shown: str) -> str:
    """The real path of what ``fd`` refers to, refused unless inside the mount: a path swapped for a symlink
    between the check and the open is caught here.

    Where the open descriptor's path cannot be read (no ``/proc``), ``shown`` is resolved again and must
    still be inside the mount and be the very file or directory that was opened (device and inode).
    """
    opened = _opened_path(fd)
    if opened is not None:
        if not is_inside(real_root, opened):
            raise PathForbiddenError("path is outside the mount")
        return opened
    again = resolve_inside(real_root, shown)
    info = os.fstat(fd)
    try:
        now = os.stat(again, follow_symlinks=False)
    except OSError:
        now = None
    if now is None or (info.st_dev, info.st_ino) != (now.st_dev, now.st_ino):
        raise PathForbiddenError("path changed while it was being opened")
    return again


def _mount_root(mount: Mount) -> str:
    root = os.path.realpath(os.path.expanduser(mount.local))
    if not os.path.isdir(root):
        raise NotFoundError(f"the local directory of mount {mount.name!r} does not exist on this machine")
    return root


def _opened_path(fd: int) -> str | None:
    """What an open descriptor refers to (Linux ``/proc``); ``None`` where that cannot be known."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _where(mount: Mount, shown: str) -> str:
    return f"{shown!r} in mount {mount.name!r}" if shown else f"the root of mount {mount.name!r}"


def _os_error(exc: OSError, where: str) -> SvcError:
    if exc.errno == errno.ELOOP:
        return PathForbiddenError(f"{where} is a symlink that cannot be followed")
    if exc.errno == errno.ENAMETOOLONG:
        return InvalidRequestError("path is too long")
    return NotFoundError(f"{where} cannot be opened ({errno.errorcode.get(exc.errno or 0, 'error')})")
