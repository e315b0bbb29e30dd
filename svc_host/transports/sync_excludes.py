"""Which paths a sync never touches: svc's default excludes plus the user's, and how a pattern matches (pure).

Every sync backend applies the same list (:func:`sync_excludes`) with the same meaning: a pattern is one rsync
exclude pattern (rsync(1), "INCLUDE/EXCLUDE PATTERN RULES"), so a user's ``exclude`` means the same whichever
backend a profile uses. :func:`is_excluded` is that meaning for backends that are not rsync.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Sequence

from svc_host.domain.profiles import Mount, check_exclude_patterns
from svc_host.errors import SyncError
from svc_host.transports.sync_backend import user_excludes

MANIFEST_FILE = ".svc-manifest.json"
"""The upload record at the root of a mount's remote directory (:class:`UploadRecord`)."""
OWNER_FILE = ".svc-owner"
"""The owner marker at the root of a mount's remote directory (:class:`OwnerMarker`)."""
TEMP_SUFFIX = ".tmp-"
"""svc's own files are written as ``<name>.tmp-<random>`` and renamed into place (``temporary_name``)."""

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git/",
    ".hg/",
    ".svn/",
    "__pycache__/",
    "*.pyc",
    ".venv/",
    "venv/",
    "node_modules/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    # svc's own files on the remote: never uploaded from a local tree, never deleted by a mirror.
    MANIFEST_FILE,
    f"{MANIFEST_FILE}{TEMP_SUFFIX}*",
    OWNER_FILE,
    f"{OWNER_FILE}{TEMP_SUFFIX}*",
)
"""What no sync uploads nor deletes, whatever the user sets: version control, caches, virtualenvs, svc's files."""


def effective_excludes(extra: Sequence[str] = ()) -> list[str]:
    """``DEFAULT_EXCLUDES`` followed by ``extra``, duplicates dropped, order kept; a pattern that
    ``check_exclude_patterns`` refuses is a ``SyncError``."""
    try:
        check_exclude_patterns(list(extra))
    except ValueError as exc:
        raise SyncError(str(exc)) from None
    return list(dict.fromkeys([*DEFAULT_EXCLUDES, *extra]))


def sync_excludes(mount: Mount) -> list[str]:
    """Every pattern a sync of ``mount`` neither uploads nor deletes: ``DEFAULT_EXCLUDES``, then
    :func:`user_excludes` (the mount's own, then its trusted project file's). Read at every call."""
    return effective_excludes(user_excludes(mount))


def exclude_hash(patterns: Sequence[str]) -> str:
    """A stable fingerprint of an exclude list; the upload record keeps it to notice a changed filter."""
    return hashlib.sha256(json.dumps(list(patterns)).encode()).hexdigest()


def is_excluded(path: str, *, is_dir: bool, patterns: Sequence[str]) -> bool:
    """Whether rsync, given ``patterns`` as exclude rules, would skip ``path`` (relative to the mount, ``/``
    separated, no trailing slash) or a directory above it.

    The rules of rsync(1) for an exclude pattern: a trailing ``/`` matches only directories; a leading ``/``
    anchors it at the mount's root; a pattern with another ``/`` or a ``**`` is matched against the end of the
    whole path, on a component boundary, any other against the last component; ``*`` matches within a
    component, ``**`` across them, ``?`` one character but ``/``, ``[...]`` a class; ``dir/***`` matches
    ``dir`` and everything in it. A directory's exclusion covers everything in it (rsync never descends).
    """
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts) + 1):
        here, here_is_dir = "/".join(parts[:depth]), is_dir or depth < len(parts)
        if any(_rule(pattern)(here, here_is_dir) for pattern in patterns):
            return True
    return False


class _Rule:
    def __init__(self, pattern: str) -> None:
        self.dirs_only = pattern.endswith("/") and not pattern.endswith("/***")
        body = pattern.rstrip("/") if self.dirs_only else pattern
        self.anchored = body.startswith("/")
        body = body.lstrip("/") if self.anchored else body
        self.whole_path = self.anchored or "/" in body or "**" in body
        self.regex = re.compile(_translate(body), re.DOTALL)

    def __call__(self, path: str, is_dir: bool) -> bool:
        if self.dirs_only and not is_dir:
            return False
        if not self.whole_path:
            return self.regex.fullmatch(path.rsplit("/", 1)[-1]) is not None
        if self.anchored:
            return self.regex.fullmatch(path) is not None
        parts = path.split("/")
        return any(self.regex.fullmatch("/".join(parts[start:])) for start in range(len(parts)))


@functools.cache
def _rule(pattern: str) -> _Rule:
    return _Rule(pattern)


def _translate(body: str) -> str:
    """An rsync wildcard pattern as a regular expression for ``fullmatch``."""
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("/***", i) and i + 4 == len(body):
            out.append("(?:/.*)?")
            i += 4
        elif body.startswith("**/", i) and (i == 0 or body[i - 1] == "/"):
            out.append("(?:.*/)?")  # a whole "**" component matches no directory too
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 3 if body.startswith("***", i) else 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "[" and (end := body.find("]", i + 2)) != -1:
            inner = body[i + 1 : end]
            negated = inner[:1] in ("!", "^")
            inner = inner[1:] if negated else inner
            out.append(f"[{'^' if negated else ''}{inner.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        elif body[i] == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
        else:
            out.append(re.escape(body[i]))
            i += 1
    return "".join(out)
