"""svc's exclude patterns as rsync arguments (pure); the patterns themselves are ``sync_excludes``'s."""

from __future__ import annotations

from collections.abc import Sequence


def filter_args(patterns: Sequence[str]) -> list[str]:
    """rsync arguments excluding ``patterns``.

    ``--filter=- PATTERN`` rather than ``--exclude=PATTERN``: ``--exclude`` reads a leading ``+ ``/``- ``
    as a rule prefix and ``!`` as "clear the list", so a pattern could turn itself into an include.
    Excluded paths are also protected from ``--delete`` (rsync never deletes excluded names unless
    ``--delete-excluded``, which svc does not use).
    """
    return [f"--filter=- {pattern}" for pattern in patterns]
