"""The plugin's own durable outbox: one SQLite file in svc's state dir, never the host's tables.

Messages leave strictly in order: the oldest undelivered message blocks the ones behind it while its
webhook is down, so a chat never shows a run's end before its failure. A message is claimed (with an
expiry) before it is sent, so two servers on one state dir never both send it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from svc_plugin_chat.messages import Message

FILE_NAME = "chat-outbox.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL,
    created_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL,
    claimed_until REAL,
    delivered_at REAL,
    dead_at REAL,
    last_error TEXT
)
"""


_prepared: set[Path] = set()  # outbox files this process has put in WAL mode with the table made
_preparing = threading.Lock()
PREPARE_SECONDS = 30.0


def _is_busy(error: sqlite3.OperationalError) -> bool:
    return "locked" in str(error) or "busy" in str(error)


@dataclass(frozen=True)
class Pending:
    """The message at the head of the line, as claimed for one delivery attempt."""

    id: int
    message: Message
    attempts: int


@dataclass(frozen=True)
class OutboxStats:
    pending: int
    delivered: int
    dead: int
    oldest_pending_at: float | None
    last_error: str | None
    last_delivered_at: float | None


class Outbox:
    """Blocking SQLite calls; the notifier runs them in a worker thread."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE_NAME

    def _prepare(self) -> None:
        """Put the file in WAL mode and make the table, once per process and file.

        Switching the journal mode needs the file to itself, and SQLite answers "database is locked" at once
        (without waiting out the busy timeout) while another connection reads it; so it is done once, retried
        until the file is free, and never again on every connection."""
        with _preparing:
            if self.path in _prepared and self.path.exists():
                return
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fresh = not self.path.exists()
            deadline = time.monotonic() + PREPARE_SECONDS
            while True:
                try:
                    with contextlib.closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as db:
                        if fresh:
                            os.chmod(self.path, 0o600)
                        db.execute("PRAGMA journal_mode=WAL")
                        db.execute(SCHEMA)
                    break
                except sqlite3.OperationalError as error:
                    if not _is_busy(error) or time.monotonic() >= deadline:
                        raise
                    time.sleep(0.05)
            _prepared.add(self.path)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self._prepare()
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            yield connection
        finally:
            connection.close()

    def add(self, message: Message, *, now: float | None = None) -> bool:
        """Queue ``message``; False when a message with its key was queued before (the same change twice)."""
        now = time.time() if now is None else now
        with self._connect() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO outbox (key, body, created_at, next_at) VALUES (?, ?, ?, ?)",
                (message.key, json.dumps(message.to_json()), now, now),
            )
            return cursor.rowcount == 1

    def claim_head(self, *, lease_seconds: float, now: float | None = None) -> tuple[Pending | None, float | None]:
        """Claim the oldest undelivered message if it is due: ``(pending, None)``; else ``(None, seconds to
        wait)``, or ``(None, None)`` when the outbox is empty."""
        now = time.time() if now is None else now
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT id, body, attempts, next_at, claimed_until FROM outbox "
                    "WHERE delivered_at IS NULL AND dead_at IS NULL ORDER BY id LIMIT 1"
                ).fetchone()
                if row is None:
                    return None, None
                row_id, body, attempts, next_at, claimed_until = row
                wait_until = max(next_at, claimed_until or 0.0)
                if wait_until > now:
                    return None, wait_until - now
                db.execute("UPDATE outbox SET claimed_until = ? WHERE id = ?", (now + lease_seconds, row_id))
                return Pending(row_id, Message.from_json(json.loads(body)), attempts), None
            finally:
                db.execute("COMMIT")

    def delivered(self, row_id: int, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self._connect() as db:
            db.execute(
                "UPDATE outbox SET delivered_at = ?, claimed_until = NULL, attempts = attempts + 1 WHERE id = ?",
                (now, row_id),
            )

    def retry_later(self, row_id: int, error: str, delay: float, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self._connect() as db:
            db.execute(
                "UPDATE outbox SET attempts = attempts + 1, next_at = ?, claimed_until = NULL, last_error = ? "
                "WHERE id = ?",
                (now + delay, error, row_id),
            )

    def give_up(self, row_id: int, error: str, *, now: float | None = None) -> None:
        """Keep the message but take it out of the line (the receiver refused it; retrying cannot help)."""
        now = time.time() if now is None else now
        with self._connect() as db:
            db.execute(
                "UPDATE outbox SET attempts = attempts + 1, dead_at = ?, claimed_until = NULL, last_error = ? "
                "WHERE id = ?",
                (now, error, row_id),
            )

    def discard(self, row_id: int) -> None:
        """Drop a message that turned out not to need sending (a workflow's own job)."""
        with self._connect() as db:
            db.execute("DELETE FROM outbox WHERE id = ?", (row_id,))

    def stats(self) -> OutboxStats | None:
        """Counts for ``svc plugins``; None when nothing was ever queued (no file)."""
        if not self.path.exists():
            return None
        with self._connect() as db:
            pending, oldest = db.execute(
                "SELECT COUNT(*), MIN(created_at) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL"
            ).fetchone()
            delivered, last_delivered = db.execute(
                "SELECT COUNT(*), MAX(delivered_at) FROM outbox WHERE delivered_at IS NOT NULL"
            ).fetchone()
            (dead,) = db.execute("SELECT COUNT(*) FROM outbox WHERE dead_at IS NOT NULL").fetchone()
            error_row = db.execute(
                "SELECT last_error FROM outbox WHERE last_error IS NOT NULL AND delivered_at IS NULL "
                "ORDER BY id DESC LIMIT 1"
            ).fetchone()
        return OutboxStats(pending, delivered, dead, oldest, error_row[0] if error_row else None, last_delivered)
