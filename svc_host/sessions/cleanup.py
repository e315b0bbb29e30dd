"""What is left of an ended session on the cluster: its logs, for a week, and nothing else.

When the watch ends a session it runs one command through the transport that removes the session's secret and
the files only its guard used (``app.json``, ``guard.py``, ``endpoint.json``, ``exit.json``): nobody can use the
secret any more, and nothing that could is left behind. The job's stdout and stderr stay, so a user can still read
why an app failed. The same command removes the directories of sessions that ended more than ``KEEP_LOGS_DAYS``
ago: a directory of the sessions root whose name is a session's (32 hex digits), which has no secret (its session
ended, here or through another svc on the same account) and was last changed (its secret removed) before then.
A live session always has its secret, so it is never taken.

Paths are positional parameters of ``sh -c``, never script text. Nothing is followed out of the sessions root:
a session directory that is a symbolic link is left alone, ``find`` does not follow links (``-type d`` is a real
directory) and ``rm -rf`` removes a link inside, not what it points at.
"""

from __future__ import annotations

import logging
import posixpath

from svc_host.errors import TransportError
from svc_host.sessions.files import SessionFiles

log = logging.getLogger(__name__)

KEEP_LOGS_DAYS = 7
"""Days an ended session's logs stay on the cluster."""
SPENT_FILES = ("secret", "app.json", "guard.py", "endpoint.json", "exit.json")
"""The files of a session that mean nothing once it ended (its secret first)."""
SESSION_NAME = "[0-9a-f]" * 32
"""A session directory's name (``uuid4().hex``), as a ``find -name`` pattern."""
TIDY = (
    "dir=$1 root=$2 minutes=$3 name=$4; shift 4; "
    'if [ -d "$dir" ] && [ ! -L "$dir" ]; then for f; do rm -f -- "$dir/$f"; done; fi; '
    '[ -d "$root" ] && [ ! -L "$root" ] || exit 0; '
    'find "$root" -mindepth 1 -maxdepth 1 -type d -name "$name" -mmin +"$minutes" '
    '-exec sh -c \'[ -e "$1/secret" ] || [ -L "$1/secret" ] || rm -rf -- "$1"\' sh {} \\;'
)
"""Remove an ended session's spent files, then the old ended sessions' directories of its root."""


def tidy_argv(session_dir: str, keep_days: float = KEEP_LOGS_DAYS) -> list[str]:
    """The command that tidies after the session in ``session_dir`` ended (see the module's docstring)."""
    where = session_dir.rstrip("/")
    root = posixpath.dirname(where)
    return ["sh", "-c", TIDY, "sh", where, root, str(round(keep_days * 24 * 60)), SESSION_NAME, *SPENT_FILES]


async def tidy(target: SessionFiles, session_dir: str, keep_days: float = KEEP_LOGS_DAYS) -> bool:
    """Tidy after the session in ``session_dir`` ended; ``False`` (and a log line) when the cluster could not
    be reached or the command failed: the next session's end tidies the old directories again."""
    try:
        result = await target.run(tidy_argv(session_dir, keep_days), timeout=60)
    except TransportError as exc:
        log.info("could not tidy the ended session in %s: %s", session_dir, exc)
        return False
    if result.exit_code != 0:
        log.info("could not tidy the ended session in %s: %s", session_dir, result.stderr.strip()[-200:])
        return False
    return True
