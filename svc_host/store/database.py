"""The ``Store``: one engine, migrations on open, and repository calls run off the event loop."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection, Engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlmodel import Session, create_engine

from svc_host.errors import ConfigError, StoreFullError
from svc_host.store.migrations import migrate

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")
_ATTEMPTS = 3
_RETRIED_SQLSTATES = frozenset({"40P01", "40001"})
"""deadlock_detected, serialization_failure"""
_SQLITE_BUSY = 5


class Store:
    """A database reached through SQLAlchemy: ``sqlite:///...`` by default, ``postgresql://...`` (SVC_DATABASE_URL)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = _engine(url)
        self._locking = self.engine.execution_options(sqlite_immediate=True)
        self._lock_first: set[object] = set()
        """The code of the repository functions that lost a race on SQLite: they begin holding the write lock."""
        self.schema_version = migrate(self.engine)

    def call(self, fn: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a repository function in one transaction (committed when it returns).

        A transaction that lost a race is run again from the start: repository functions only read and write the
        database, and the aborted attempt left nothing behind. On PostgreSQL that is one the server aborted (a
        deadlock, a serialization failure), up to three times. On SQLite it is one that read, then found another
        writer had committed before its first write: it runs once more holding the write lock from its first
        read (``BEGIN IMMEDIATE``), so it cannot lose again, and so does every later call of that function (one
        that writes after reading is likely to meet a writer again; readers keep reading alongside writers).
        A full disk is ``StoreFullError`` (nothing was saved)."""
        attempt = 1
        code = getattr(fn, "__code__", fn)
        bind = self._locking if code in self._lock_first else self.engine
        while True:
            try:
                with Session(bind, expire_on_commit=False) as session:
                    result = fn(session, *args, **kwargs)
                    session.commit()
                    return result
            except OperationalError as exc:
                if _disk_full(exc):
                    where = self.engine.url.render_as_string(hide_password=True)
                    raise StoreFullError(
                        f"the disk holding svc's store ({where}) is full; nothing was saved: free some space and "
                        "try again"
                    ) from exc
                if _sqlite_write_conflict(exc) and bind is self.engine:
                    self._lock_first.add(code)
                    bind = self._locking
                    continue
                if attempt == _ATTEMPTS or not _aborted_by_postgresql(exc):
                    raise
            except DBAPIError as exc:
                if attempt == _ATTEMPTS or not _aborted_by_postgresql(exc):
                    raise
            log.info("running a transaction again after the database aborted it")
            attempt += 1

    async def run(self, fn: Callable[Concatenate[Session, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``call`` in a worker thread, so the event loop never waits on the database."""
        return await asyncio.to_thread(functools.partial(self.call, fn, *args, **kwargs))

    def close(self) -> None:
        self.engine.dispose()


def _aborted_by_postgresql(exc: DBAPIError) -> bool:
    return getattr(exc.orig, "sqlstate", None) in _RETRIED_SQLSTATES


def _sqlite_write_conflict(exc: OperationalError) -> bool:
    """SQLITE_BUSY (another writer holds the lock) or SQLITE_BUSY_SNAPSHOT (another writer committed after this
    transaction's first read): what a deferred transaction meets, at once, when its first write follows a read."""
    return getattr(exc.orig, "sqlite_errorcode", 0) & 0xFF == _SQLITE_BUSY


def _disk_full(exc: OperationalError) -> bool:
    """SQLite's SQLITE_FULL, or PostgreSQL's ``disk_full`` (SQLSTATE 53100)."""
    return "database or disk is full" in str(exc.orig) or getattr(exc.orig, "sqlstate", None) == "53100"


def _engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise ConfigError(f"SVC_DATABASE_URL is not a database URL: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ConfigError(f"SVC_DATABASE_URL: svc runs on SQLite or PostgreSQL, not {backend!r}")
    connect_args: dict[str, Any] = {}
    if backend == "postgresql":
        # psycopg 3 whatever the URL names (SQLAlchemy's default for postgresql:// is psycopg2); TIMESTAMP
        # columns hold UTC, so the session's time zone is UTC for aware datetimes to be stored as written.
        parsed = parsed.set(drivername="postgresql+psycopg")
        connect_args = {"options": _with_utc(parsed.query.get("options"))}
        parsed = parsed.difference_update_query(["options"])
    if backend == "sqlite":
        connect_args = {"check_same_thread": False, "timeout": 30}
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    engine = create_engine(parsed, connect_args=connect_args, pool_pre_ping=backend == "postgresql")
    if backend == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _: Any) -> None:
            # The driver would begin a transaction only at the first write, so a read-then-write decided on rows
            # another writer was changing. svc begins every transaction itself, at its first statement.
            dbapi_conn.isolation_level = None
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            # With WAL, NORMAL keeps the database consistent through a crash of svc and only skips the fsync
            # per commit (a power cut may lose the last transitions, which the next tick records again).
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            # The ``sqlite_immediate`` option takes the write lock at once: migrations, and functions that lost a race.
            immediate = conn.get_execution_options().get("sqlite_immediate", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _with_utc(options: str | tuple[str, ...] | None) -> str:
    """libpq ``options`` of the URL (e.g. ``-csearch_path=team``) with the session time zone set to UTC."""
    given = " ".join([options] if isinstance(options, str) else options or ())
    return f"{given} -c timezone=UTC".strip()
