"""Which paths a sync never touches: svc's default excludes plus a mount's own patterns (pure)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from svc_host.plugin import SyncError, check_exclude_patterns

MANIFEST_NAME = ".svc-manifest.json"
"""The upload record at the root of a mount's remote directory."""
OWNER_NAME = ".svc-owner"
"""The owner marker at the root of a mount's remote directory."""
TEMP_SUFFIX = ".tmp-"
"""svc's own files are written as ``<name>.tmp-<random>`` then renamed into place."""

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
    MANIFEST_NAME,
    f"{MANIFEST_NAME}{TEMP_SUFFIX}*",
    OWNER_NAME,
    f"{OWNER_NAME}{TEMP_SUFFIX}*",
)


def effective_excludes(extra_excludes: Sequence[str] = ()) -> list[str]:
    """The defaults followed by ``extra_excludes`` (rsync patterns), duplicates dropped, order kept.

    A pattern is a single rsync filter pattern: ``*.ckpt``, ``/data/``, ``logs/**``. Patterns that
    ``check_exclude_patterns`` refuses (empty, a line break or NUL, too long, too many) are a ``SyncError``.
    """
    try:
        check_exclude_patterns(list(extra_excludes))
    except ValueError as exc:
        raise SyncError(str(exc)) from None
    return list(dict.fromkeys([*DEFAULT_EXCLUDES, *extra_excludes]))


def exclude_hash(patterns: Sequence[str]) -> str:
    """A stable fingerprint of an exclude list; the upload record keeps it to notice a changed filter."""
    return hashlib.sha256(json.dumps(list(patterns)).encode()).hexdigest()


def filter_args(patterns: Sequence[str]) -> list[str]:
    """rsync arguments excluding ``patterns``.

    ``--filter=- PATTERN`` rather than ``--exclude=PATTERN``: ``--exclude`` reads a leading ``+ ``/``- ``
    as a rule prefix and ``!`` as "clear the list", so a pattern could turn itself into an include.
    Excluded paths are also protected from ``--delete`` (rsync never deletes excluded names unless
    ``--delete-excluded``, which svc does not use).
    """
    return [f"--filter=- {pattern}" for pattern in patterns]
