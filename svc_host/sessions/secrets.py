"""Each session's secret, for svc's way in: kept in memory by this process, read from the session's directory
on the cluster when not (after a restart of ``svc serve``, or for a session another process started).

The secret's one copy at rest is ``<session_dir>/secret`` on the cluster (mode 0600 in a 0700 directory, the file
the node guard reads): the store never holds it, so a database dump or a shared PostgreSQL gives no way into a
session, and nothing here logs it or puts it in an answer.
"""

from __future__ import annotations

from svc_host.errors import TransportError
from svc_host.sessions.files import SessionFiles

SECRET_FILE = "secret"  # noqa: S105 - the file's name, not a secret
MAX_SECRET_BYTES = 4096
_KEPT: dict[tuple[str, str], str] = {}
_MOST_KEPT = 4096


def keep(cluster: str, job_id: str, secret: str) -> None:
    """Remember a session's secret (at start, or once read)."""
    if len(_KEPT) >= _MOST_KEPT:
        _KEPT.clear()
    _KEPT[(cluster, job_id)] = secret


def forget(cluster: str, job_id: str) -> None:
    """Drop an ended session's secret."""
    _KEPT.pop((cluster, job_id), None)


async def secret_of(target: SessionFiles, cluster: str, job_id: str, session_dir: str) -> str:
    """The session's secret: from memory, else read through the transport (``TransportError`` when unreadable)."""
    kept = _KEPT.get((cluster, job_id))
    if kept is not None:
        return kept
    found = await target.read_bytes(f"{session_dir}/{SECRET_FILE}", 0, MAX_SECRET_BYTES)
    secret = found[0].decode(errors="replace").strip() if found is not None else ""
    if not secret:
        raise TransportError(f"the secret of session {job_id} on {cluster!r} is missing from its directory")
    keep(cluster, job_id, secret)
    return secret
