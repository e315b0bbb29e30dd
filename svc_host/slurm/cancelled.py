"""Who cancelled a job: sacct's state names the uid (``CANCELLED by 1002``); the cluster's passwd names the user."""

from __future__ import annotations

import re

_BY = re.compile(r"^\s*CANCELLED\+?\s+by\s+(\d+)\s*$", re.IGNORECASE)


def canceller_uid(raw_state: str) -> str | None:
    """The uid in ``CANCELLED by 1002`` (``"1002"``); ``None`` for any other state.

    >>> canceller_uid("CANCELLED by 1002")
    '1002'
    >>> canceller_uid("CANCELLED") is None
    True
    """
    found = _BY.match(raw_state)
    return found.group(1) if found else None


def getent_argv(uid: str) -> list[str]:
    """The command that names the user of ``uid`` on the cluster (its passwd line)."""
    return ["getent", "passwd", uid]


def user_of(passwd_line: str, uid: str) -> str | None:
    """The user name of ``uid`` in a passwd line (``alice:x:1002:1002::/home/alice:/bin/bash`` is ``alice``)."""
    fields = passwd_line.strip().split(":")
    if len(fields) < 3 or fields[2] != uid or not fields[0]:
        return None
    return fields[0]
