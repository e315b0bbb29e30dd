"""The submission throttle: every workflow job and sweep cell of one transport's user stays under the site's
submit limits together (``svc_host.slurm.limits``), waiting here instead of meeting sbatch's refusal.

Before sbatch, a workflow job (a sweep cell's included) asks :meth:`SubmitThrottle.try_admit` for one job in its
QOS (the script's ``--qos``, else the user's default QOS); a sweep launched as one job array asks :meth:`admit`
for its tasks. The jobs already queued come from the transport's queue snapshot, the squeue the monitor's tick
refreshes (no query per submission): every job of the user, the ones in that QOS (known for jobs svc let
through, else counted in the default QOS), and every job for ``MaxJobCount``. Jobs admitted but not yet seen in
a snapshot are counted as reservations. When the tightest limit leaves room, the job goes ahead (an array with
``min(tasks, room, MaxArraySize)`` tasks). Otherwise a job stays waiting and its run goes on; the throttle wakes
the run when the monitor records a change on the transport (a job ended) or every ``recheck`` seconds (jobs svc
does not track), and the run tries again. An array waits in its background launch instead, first in line for
its QOS. :meth:`reason` says what a run or sweep waits for (``queued`` in their views).

Direct submissions (``POST /api/jobs``, ``submit_job``, ``svc submit``) do not come here: they relay sbatch's
own refusal. A transport that cannot run Slurm's tools, or whose limits cannot be read, is not throttled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from svc_host.errors import SvcError
from svc_host.rendering.sbatch import sbatch_words
from svc_host.slurm.arrays import array_of
from svc_host.slurm.limits import Counts, SiteLimits, headroom

if TYPE_CHECKING:
    from svc_host.domain.jobs import JobStatus
    from svc_host.runtime.snapshots import SchedulerSnapshots
    from svc_host.store.jobs import StateChange
    from svc_host.store.tables import WorkflowRunRecord

log = logging.getLogger(__name__)

BEHIND = "queued: waiting for earlier submissions"


def script_qos(text: str) -> str | None:
    """The QOS a batch script's leading ``#SBATCH`` block asks for (the last one given), or None."""
    found: str | None = None
    for line in text.split("\n")[1:] if text.startswith("#!") else text.split("\n"):
        if not line.startswith("#SBATCH"):
            if line.strip() and not line.lstrip().startswith("#"):
                break
            continue
        try:
            words = iter(sbatch_words(line[len("#SBATCH") :]))
        except ValueError:
            continue
        for word in words:
            if word.startswith("--qos="):
                found = word.removeprefix("--qos=")
            elif word in ("--qos", "-q"):
                found = next(words, found)
            elif word.startswith("-q") and not word.startswith("--"):
                found = word[2:]
    return found or None


@dataclass(eq=False)
class _Reservation:
    qos: str
    count: int
    job_ids: tuple[str, ...] = ()
    settled_at: float | None = None
    """Loop time its sbatch returned (None: still submitting)."""


@dataclass
class _Transport:
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    reservations: list[_Reservation] = field(default_factory=list)
    qos_of: dict[str, str] = field(default_factory=dict)
    """Job id (an array's own id for its tasks) -> QOS, for jobs this throttle let through."""
    waiting: dict[str, str] = field(default_factory=dict)
    """Waiter (a run id, ``sweep:<id>``) -> why it waits."""
    shown: dict[str, str] = field(default_factory=dict)
    """The reasons of the last round of woken waiters, shown until they wait again or get in."""
    wakers: dict[str, Callable[[], None]] = field(default_factory=dict)
    """Run id -> how to make the run try again."""
    watcher: asyncio.Task[None] | None = None


class Admission:
    """Leave to submit ``count`` jobs; say how it went with :meth:`submitted` or :meth:`abandon`."""

    def __init__(self, throttle: SubmitThrottle | None, transport: str, reservation: _Reservation | None) -> None:
        self._throttle = throttle
        self._transport = transport
        self._reservation = reservation
        self.count = reservation.count if reservation is not None else 0

    def submitted(self, job_id: str) -> None:
        """sbatch accepted the jobs as ``job_id`` (an array's own id for its tasks)."""
        if self._throttle is not None and self._reservation is not None:
            self._throttle._submitted(self._transport, self._reservation, job_id)
        self._reservation = None

    def abandon(self) -> None:
        """Nothing was submitted: the room goes back at once. No-op after :meth:`submitted`, so it fits a
        ``finally``."""
        if self._throttle is not None and self._reservation is not None:
            self._throttle._abandon(self._transport, self._reservation)
        self._reservation = None


class SubmitThrottle:
    """One per process (``Host.submit_throttle``): the waiting submissions of every transport."""

    def __init__(
        self, snapshots: SchedulerSnapshots, *, recheck: float = 5.0, max_age: float = 1.0, seen_grace: float = 15.0
    ) -> None:
        self.snapshots = snapshots
        self.recheck = recheck
        """Seconds between looks at the queue while waiting (jobs svc does not track end unannounced)."""
        self.max_age = max_age
        """Seconds the queue snapshot a look reads may be old."""
        self.seen_grace = seen_grace
        """Seconds after its sbatch returned that an admitted job still counts while no snapshot shows it (a job
        that ended before any squeue saw it)."""
        self._state: dict[str, _Transport] = {}

    async def admit(
        self, transport: str, *, qos: str | None, wanted: int, waiters: Sequence[str], array: bool = False
    ) -> Admission:
        """Wait until at least one of ``wanted`` jobs in ``qos`` fits under the limits; the admission's ``count``
        is how many may be submitted now (``wanted`` when nothing limits). An ``array`` (task indexes from 0) is
        also cut to ``MaxArraySize`` tasks. ``waiters`` (``sweep:<id>``, run ids) say who waits. For work that
        runs in the background (a sweep's array); a run's step uses :meth:`try_admit`."""
        limits = await self._limits(transport)
        if limits is None:
            return Admission(None, transport, _Reservation(qos or "", wanted))
        if array and limits.max_array_size is not None:
            wanted = max(1, min(wanted, limits.max_array_size))
        qos = qos or limits.default_qos
        state = self._state.setdefault(transport, _Transport())
        self._wait(state, waiters, BEHIND, None)
        try:
            async with state.locks.setdefault(qos, asyncio.Lock()):
                while True:
                    state.wake.clear()
                    admitted = await self._reserve(transport, state, limits, qos, wanted, waiters, None)
                    if admitted is not None:
                        return admitted
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(state.wake.wait(), self.recheck)
        finally:
            self._done(state, waiters)

    async def try_admit(
        self, transport: str, *, qos: str | None, waiters: Sequence[str], wake: Callable[[], None]
    ) -> Admission | None:
        """Leave to submit one job in ``qos`` now, or None when it does not fit: then ``wake`` is called once
        there may be room (a job ended, or every ``recheck`` seconds), and ``reason`` says why it waits."""
        limits = await self._limits(transport)
        if limits is None:
            return Admission(None, transport, _Reservation(qos or "", 1))
        qos = qos or limits.default_qos
        state = self._state.setdefault(transport, _Transport())
        if state.locks.setdefault(qos, asyncio.Lock()).locked():  # an array waits first
            self._wait(state, waiters, BEHIND, wake)
            self._watch(transport, state)
            return None
        admitted = await self._reserve(transport, state, limits, qos, 1, waiters, wake)
        if admitted is None:
            self._watch(transport, state)
        return admitted

    def refused(self, transport: str, *, reason: str, waiters: Sequence[str], wake: Callable[[], None]) -> None:
        """sbatch refused a job for a submit limit the counts missed (jobs of the user's other tools in that QOS,
        others' jobs under a group limit): it waits like a job that did not fit."""
        state = self._state.setdefault(transport, _Transport())
        self._wait(state, waiters, f"queued: sbatch refused it ({reason}); trying again as jobs end", wake)
        self._watch(transport, state)

    async def _reserve(
        self,
        transport: str,
        state: _Transport,
        limits: SiteLimits,
        qos: str,
        wanted: int,
        waiters: Sequence[str],
        wake: Callable[[], None] | None,
    ) -> Admission | None:
        try:
            queue = await self.snapshots.queue(transport, max_age=self.max_age)
        except SvcError as exc:  # a scheduler hiccup must not fail a submission: sbatch's refusal is held back
            log.warning("queue of transport %r unreadable; a submission goes ahead unthrottled: %s", transport, exc)
            self._done(state, waiters)
            return Admission(None, transport, _Reservation(qos, wanted))
        # From here to the reservation nothing awaits: two submissions never take the same room.
        room = headroom(limits.submit_limits(qos), self._counts(state, limits, qos, queue.value, queue.taken_at))
        if room.room is not None and room.room < 1:
            self._wait(state, waiters, room.reason(), wake)
            return None
        self._done(state, waiters)
        reservation = _Reservation(qos, wanted if room.room is None else min(wanted, room.room))
        state.reservations.append(reservation)
        return Admission(self, transport, reservation)

    @staticmethod
    def _wait(state: _Transport, waiters: Sequence[str], reason: str, wake: Callable[[], None] | None) -> None:
        for waiter in waiters:
            state.waiting[waiter] = reason
        if wake is not None and waiters:
            state.wakers[waiters[0]] = wake

    @staticmethod
    def _done(state: _Transport, waiters: Sequence[str]) -> None:
        for waiter in waiters:
            state.waiting.pop(waiter, None)
            state.shown.pop(waiter, None)
            state.wakers.pop(waiter, None)

    def _watch(self, transport: str, state: _Transport) -> None:
        """Make sure a task calls the wakers of ``transport`` whenever there may be room."""
        if state.watcher is None or state.watcher.done():
            state.watcher = asyncio.create_task(self._watcher(state), name=f"svc-throttle-{transport}")

    async def _watcher(self, state: _Transport) -> None:
        while state.wakers:
            state.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(state.wake.wait(), self.recheck)
            # Each woken run tries again and waits anew if there is still no room; what waited a round ago and
            # did not come back (a cancelled run) is forgotten.
            state.shown, state.waiting = state.waiting, {}
            wakers, state.wakers = state.wakers, {}
            for wake in wakers.values():
                wake()

    async def usage(self, transport: str, limits: SiteLimits, qos: str | None = None) -> Counts:
        """The jobs the limits count now (the queue snapshot plus admitted jobs it does not show yet)."""
        qos = qos or limits.default_qos
        state = self._state.setdefault(transport, _Transport())
        queue = await self.snapshots.queue(transport, max_age=self.max_age)
        return self._counts(state, limits, qos, queue.value, queue.taken_at)

    def waiting(self, transport: str) -> int:
        """How many runs and sweeps wait to submit on ``transport``."""
        state = self._state.get(transport)
        if state is None:
            return 0
        return len({w for w in (*state.waiting, *state.shown) if not w.startswith("sweep:")})

    def reason(self, waiter: str) -> str | None:
        """Why ``waiter`` (a run id, or ``sweep:<id>``) waits to submit, or None when it does not."""
        for state in self._state.values():
            found = state.waiting.get(waiter) or state.shown.get(waiter)
            if found is not None:
                return found
        return None

    async def on_changes(self, changes: Sequence[StateChange]) -> None:
        """The monitor recorded transitions (a job may have ended): waiting submissions look again."""
        for name in {change.transport for change in changes}:
            self._wake(name)

    async def close(self) -> None:
        """Stop waking waiting runs (their engine is closed; the next process takes them over)."""
        watchers = [state.watcher for state in self._state.values() if state.watcher is not None]
        for watcher in watchers:
            watcher.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        self._state = {}

    async def _limits(self, transport: str) -> SiteLimits | None:
        try:
            return (await self.snapshots.limits(transport)).value
        except SvcError as exc:  # sbatch still refuses what does not fit, with its own message
            log.warning("limits of transport %r cannot be read; submissions are not throttled: %s", transport, exc)
            return None

    def _counts(
        self, state: _Transport, limits: SiteLimits, qos: str, queue: Sequence[JobStatus], taken_at: float
    ) -> Counts:
        live = [job for job in queue if not job.state.is_terminal]
        seen = {job.job_id for job in live} | {array_of(job.job_id) for job in live}
        state.reservations = [r for r in state.reservations if not self._visible(r, seen, taken_at)]
        mine = [job for job in live if job.user == limits.user]

        def qos_of(job_id: str) -> str:
            return state.qos_of.get(job_id) or state.qos_of.get(array_of(job_id) or "") or limits.default_qos

        in_qos = sum(1 for job in mine if qos_of(job.job_id) == qos)
        reserved = sum(r.count for r in state.reservations)
        reserved_qos = sum(r.count for r in state.reservations if r.qos == qos)
        known = {job.job_id for job in mine} | {array_of(job.job_id) for job in mine}
        known |= {job_id for r in state.reservations for job_id in r.job_ids}
        state.qos_of = {job_id: q for job_id, q in state.qos_of.items() if job_id in known}
        return Counts(user=len(mine) + reserved, user_in_qos=in_qos + reserved_qos, cluster=len(live) + reserved)

    def _visible(self, reservation: _Reservation, seen: set[str | None], taken_at: float) -> bool:
        """Whether a snapshot taken at ``taken_at`` counts the reservation's jobs itself (or they ended long ago)."""
        if reservation.settled_at is None:
            return False
        if any(job_id in seen for job_id in reservation.job_ids):
            return True
        return taken_at > reservation.settled_at + self.seen_grace

    def _submitted(self, transport: str, reservation: _Reservation, job_id: str) -> None:
        state = self._state.setdefault(transport, _Transport())
        reservation.job_ids = (job_id,)
        reservation.settled_at = asyncio.get_running_loop().time()
        state.qos_of[job_id] = reservation.qos
        self.snapshots.changed(transport)  # a list read next must show the new job

    def _abandon(self, transport: str, reservation: _Reservation) -> None:
        state = self._state.get(transport)
        if state is not None and reservation in state.reservations:
            state.reservations.remove(reservation)
            self._wake(transport)

    def _wake(self, transport: str) -> None:
        state = self._state.get(transport)
        if state is not None:
            state.wake.set()


def waiters_of(run: WorkflowRunRecord) -> tuple[str, ...]:
    """Who waits when a job of ``run`` waits: the run, and its sweep (``sweep:<id>``) for a cell."""
    return (run.id,) if run.sweep_id is None else (run.id, sweep_waiter(run.sweep_id))


def sweep_waiter(sweep_id: int) -> str:
    return f"sweep:{sweep_id}"
