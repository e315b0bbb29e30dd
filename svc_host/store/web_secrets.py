"""Repository functions of the dashboard's sessions and one-time login codes (``web_secret``), for ``Store.call``.

A row holds the keyed hash of a secret (``svc_host.api.sessions`` makes it), its kind (``session`` or ``code``)
and when it expires, in Unix seconds. The secrets themselves are never stored.
"""

from __future__ import annotations

from sqlalchemy import CursorResult, text
from sqlmodel import Session


def add(session: Session, key: str, kind: str, expires_at: int, now: int) -> None:
    """Store a new secret's key, and forget every secret that has expired."""
    session.execute(text("DELETE FROM web_secret WHERE expires_at <= :now"), {"now": now})
    session.execute(
        text("INSERT INTO web_secret (key, kind, expires_at) VALUES (:key, :kind, :expires_at)"),
        {"key": key, "kind": kind, "expires_at": expires_at},
    )


def alive_until(session: Session, key: str, kind: str, now: int) -> int | None:
    """When the secret expires (Unix seconds) while it exists and has not expired; None otherwise."""
    found = session.execute(
        text("SELECT expires_at FROM web_secret WHERE key = :key AND kind = :kind AND expires_at > :now"),
        {"key": key, "kind": kind, "now": now},
    ).first()
    return None if found is None else int(found[0])


def take(session: Session, key: str, kind: str, now: int) -> bool:
    """Delete the secret; True when it existed unexpired. Exactly one caller ever takes a one-time code."""
    result = session.execute(
        text("DELETE FROM web_secret WHERE key = :key AND kind = :kind AND expires_at > :now"),
        {"key": key, "kind": kind, "now": now},
    )
    return isinstance(result, CursorResult) and result.rowcount == 1


def drop(session: Session, key: str) -> None:
    """Forget a secret (a session logged out)."""
    session.execute(text("DELETE FROM web_secret WHERE key = :key"), {"key": key})
