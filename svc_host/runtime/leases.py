"""Leases: which svc process drives a long-running thing (a workflow run, a sweep, later a schedule), until when.

Every svc process has one owner name (``<host>:<pid>:<random>``, ``new_owner``). A row is driven only by the
process holding its lease (its ``owner`` and ``lease_until`` columns); the holder renews it on a timer, a clean
shutdown releases it, and another process takes a row over once its lease has run out, at once when its owner
was a process on this machine that has exited (``owner_is_dead``). ``claim`` is a compare-and-set, so two
processes can never both take a row over, on SQLite or any other database.

One ``Leases`` per table serves every kind of leased row; its methods are repository functions for
``Store.run``/``call``. A ``LeaseKeeper`` carries them out for one process: it renews the leases the process
holds on a timer and, in servers, takes over the rows nobody drives.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Collection, Hashable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sqlalchemy import Table, or_, select, update
from sqlmodel import Session, SQLModel

from svc_host.domain.times import as_utc, utc_now

if TYPE_CHECKING:
    from svc_host.store.database import Store

log = logging.getLogger(__name__)
Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True)
class Leases(Generic[Key]):
    """The leases of one table with ``id``, ``status``, ``owner``, ``lease_until`` and ``started_at`` columns.

    ``terminal`` statuses need no driver (and are never claimed); ``idle`` ones are not adopted either (a sweep
    cell waiting for its sweep's orchestrator), though they can be claimed.
    """

    table: Table
    terminal: frozenset[str]
    idle: frozenset[str] = frozenset()

    def claim(
        self,
        session: Session,
        row_id: Key,
        owner: str,
        until: datetime,
        now: datetime | None = None,
        *,
        steal_from: str | None = None,
    ) -> bool:
        """Take a row over if nobody holds it, ``owner`` does, its lease ran out, or it is ``steal_from`` (a
        holder known to be dead)."""
        c = self.table.c
        holders = [c.owner.is_(None), c.owner == owner, c.lease_until < (now or utc_now())]
        if steal_from is not None:
            holders.append(c.owner == steal_from)
        result = session.execute(
            update(self.table)
            .where(c.id == row_id, c.status.not_in(sorted(self.terminal)), or_(*holders))
            .values(owner=owner, lease_until=until)
        )
        return _rowcount(result) == 1

    def orphaned(
        self, session: Session, now: datetime | None = None, *, dead_owner: Callable[[str], bool] | None = None
    ) -> list[tuple[Key, str | None]]:
        """``(id, owner)`` of rows nobody drives, oldest first: not terminal nor idle, and held by nobody, by a
        lease that ran out, or by an owner ``dead_owner`` says is gone."""
        moment = now or utc_now()
        c = self.table.c
        query = (
            select(c.id, c.owner, c.lease_until)
            .where(c.status.not_in(sorted(self.terminal | self.idle)))
            .order_by(c.started_at)
        )
        found: list[tuple[Key, str | None]] = []
        for row_id, owner, lease_until in session.execute(query):
            lease = as_utc(lease_until)
            gone = owner is not None and dead_owner is not None and dead_owner(owner)
            if owner is None or lease is None or lease < moment or gone:
                found.append((row_id, owner))
        return found

    def renew(self, session: Session, owner: str, until: datetime) -> list[Key]:
        """Extend the lease of every row ``owner`` still holds; returns their ids."""
        c = self.table.c
        held = (c.owner == owner, c.status.not_in(sorted(self.terminal)))
        session.execute(update(self.table).where(*held).values(lease_until=until))
        return [row_id for (row_id,) in session.execute(select(c.id).where(*held))]

    def release(self, session: Session, owner: str, row_ids: Collection[Key] | None = None) -> None:
        """Give rows up (a clean shutdown): another process may take them over at once."""
        c = self.table.c
        query = update(self.table).where(c.owner == owner)
        if row_ids is not None:
            query = query.where(c.id.in_(list(row_ids)))
        session.execute(query.values(owner=None, lease_until=None))


class LeaseKeeper(Generic[Key]):
    """One process's leases of one table: ``claim`` and ``release`` for it, and ``run`` (a task) that takes over
    orphaned rows at once and on every tick when ``adopt`` is on (servers), and every ``every`` seconds renews
    the leases held.

    ``on_held`` receives the ids still held after each renewal (the safety net: re-plan them, for changes another
    process recorded); ``on_taken`` is awaited for each row taken over.
    """

    def __init__(
        self,
        store: Store,
        leases: Leases[Key],
        owner: str,
        *,
        lease: timedelta,
        every: float,
        adopt: bool,
        on_held: Callable[[list[Key]], None],
        on_taken: Callable[[Key], Awaitable[None]],
        label: str,
    ) -> None:
        self.store = store
        self.leases = leases
        self.owner = owner
        self.lease = lease
        self.every = every
        self.adopt = adopt
        self.on_held = on_held
        self.on_taken = on_taken
        self.label = label

    async def claim(self, row_id: Key) -> bool:
        return await self.store.run(self.leases.claim, row_id, self.owner, utc_now() + self.lease)

    async def release(self) -> None:
        await self.store.run(self.leases.release, self.owner)

    async def run(self) -> None:
        while True:
            if self.adopt:
                try:
                    await self._adopt()
                except Exception:
                    log.exception("taking over %ss failed", self.label)
            await asyncio.sleep(self.every)
            try:
                self.on_held(await self.store.run(self.leases.renew, self.owner, utc_now() + self.lease))
            except Exception:
                log.exception("renewing %s leases failed", self.label)

    async def _adopt(self) -> None:
        for row_id, holder in await self.store.run(self.leases.orphaned, dead_owner=owner_is_dead):
            until = utc_now() + self.lease
            if await self.store.run(self.leases.claim, row_id, self.owner, until, steal_from=holder):
                log.info("taking over %s %s (was held by %s)", self.label, row_id, holder or "nobody")
                await self.on_taken(row_id)


def table_of(model: type[SQLModel]) -> Table:
    """The table of a ``table=True`` model."""
    return SQLModel.metadata.tables[str(model.__tablename__)]


def new_owner() -> str:
    """A process's owner name: ``<host>:<pid>:<random>``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def owner_is_dead(owner: str) -> bool:
    """Whether ``owner`` (``host:pid:token``) was a process on this machine that has exited."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _rowcount(result: Any) -> int:
    return int(getattr(result, "rowcount", 0))
