"""The watch: one tick moves every open session, of every cluster, one step along queued -> starting -> ready ->
ended, and announces each move once (``session.status_changed`` through ``Ports.emit``).

A tick reads the open sessions with their jobs' states in one store transaction (the monitor tracks the jobs,
as any job: the watch asks the scheduler nothing itself). For every session still waiting it reads the node guard's
``endpoint.json`` through the transport, all of a cluster's in one command per tick, until the guard has written it
(which also says the job runs, before the monitor's next look at the queue), then GETs the kind's ``ready_path``
through the way in (the proxy's connection, the session's secret) until the app answers. The pure
``domain.sessions.next_state`` decides each move from those facts; the watch gathers them and applies its answer.
A session ends when its job ends (``stopped`` if someone asked, ``time_limit``, ``node_failure``, ``app_exited``
with the tail of the job's stderr when the guard wrote ``exit.json``, else ``job_ended``), when the app did not answer
within the kind's start timeout after the job started (``start_timeout``: the job is cancelled), and when a
session with an idle timeout carried no traffic (and, with a ``busy_path``, ran no busy kernel) for that long
(``idle_timeout``: a ``session.idle_warning`` event first, 5 minutes before or at 80 % of it, whichever is later).
The watch that ends a session tidies its directory on the cluster (``cleanup.tidy``: the secret goes at once).

Everything the watch knows is in the store, so a restarted ``svc serve`` simply resumes. Moves are
compare-and-set on the state: two servers on one store announce each move once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from svc_host.domain.jobs import JobState
from svc_host.domain.sessions import EndReason, SessionFacts, SessionState, next_state
from svc_host.domain.times import as_utc
from svc_host.errors import SvcError
from svc_host.plugin_core.records import Event
from svc_host.runtime.ports import Ports
from svc_host.sessions import cleanup, endpoints, files, probe, reach, secrets, traffic

if TYPE_CHECKING:
    from svc_host.plugin_core.records import SessionKindSpec
    from svc_host.store.tables import InteractiveSessionRecord, JobRecord

log = logging.getLogger(__name__)

STATUS_CHANGED = "session.status_changed"
IDLE_WARNING = "session.idle_warning"
TAIL_BYTES = 2000
"""The most of the job's stderr kept as an ended session's ``end_detail``."""


def base_path(cluster: str, job_id: str) -> str:
    """The URL path a session is served under (the node guard substitutes the same for ``{base_path}``)."""
    return f"/s/{cluster}/{job_id}/"


def idle_warning_after(idle_minutes: int) -> timedelta:
    """When an idle session is warned: 5 minutes before its end, or at 80 % of a shorter timeout."""
    return timedelta(minutes=max(idle_minutes - 5, idle_minutes * 0.8))


WAITING = ("queued", "starting")
"""The states of a session whose guard's endpoint is not known yet."""
STARTING_INTERVAL = 0.25
"""Seconds between ticks while a session is queued or starting: its app is seen answering within a quarter second
(the goal: ready within a second of the app's own start). A tick then reads the store, the waiting sessions'
``endpoint.json`` in one command per cluster, then one GET through the way in per session whose guard is up."""
LOOK_INTERVAL = 0.5
"""Seconds between looks at the store for a new session between full ticks: a session started through any face is
seen waiting within half a second (a job on an idle cluster starts within a second), while the ready sessions'
own checks keep the slower ``interval``. A look is one read of the open sessions, nothing on the cluster."""


class SessionWatch:
    """Ticks every ``interval`` seconds while the process runs (``svc serve``), every ``starting_interval`` while
    a session waits to be ready, and at once when a look (every ``look_interval``) finds a new one waiting; ``tick``
    is one pass."""

    def __init__(
        self,
        ports: Ports,
        *,
        interval: float = 2.0,
        starting_interval: float = STARTING_INTERVAL,
        look_interval: float = LOOK_INTERVAL,
    ) -> None:
        self.ports = ports
        self.interval = interval
        self.starting_interval = min(interval, starting_interval)
        self.look_interval = min(interval, look_interval)
        self._task: asyncio.Task[None] | None = None
        self._watching = contextlib.ExitStack()
        self._watched: set[str] = set()

    async def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="session watch")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._watching.close()
        self._watching = contextlib.ExitStack()
        self._watched.clear()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = -math.inf
        while True:
            try:
                if self._watched or loop.time() - last >= self.interval or await self._one_waiting():
                    last = loop.time()
                    await self.tick()
            except Exception:  # one bad tick must not end the watch
                log.exception("session watch tick failed")
            await asyncio.sleep(self.starting_interval if self._watched else self.look_interval)

    async def _one_waiting(self) -> bool:
        """Whether an open session waits to be ready (one just started): the look between full ticks."""
        from svc_host.store import sessions as repo

        rows = await self.ports.store.run(repo.open_sessions)
        return any(row.state in WAITING for row in rows)

    async def tick(self, now: datetime | None = None) -> None:
        """Move every open session one step (``now``: the time the tick decides at)."""
        from svc_host.store import sessions as repo

        seen = traffic.take()
        if seen:
            await self.ports.store.run(repo.note_activity, seen)
        pairs = await self.ports.store.run(repo.open_with_jobs)
        self._keep_monitor_quick({row.cluster for row, _ in pairs if row.state in ("queued", "starting")})
        try:
            offered = self.ports.plugins.session_kinds()
        except SvcError:
            offered = {}
        guards = await self._guards_up(pairs)
        for row, job in pairs:
            if job is None:
                continue
            try:
                endpoint = guards.get((row.cluster, row.job_id))
                await self._step(row, job, offered.get(row.kind), endpoint, now or datetime.now(UTC))
            except SvcError as exc:  # a cluster out of reach: the next tick tries again
                log.info("session %s on %s: %s", row.job_id, row.cluster, exc)

    async def _guards_up(
        self, pairs: list[tuple[InteractiveSessionRecord, JobRecord | None]]
    ) -> dict[tuple[str, str], tuple[str, int]]:
        """Where the guards of the sessions still waiting for one listen, by (cluster, job id): one command per
        cluster (``endpoints.read_all``), so a job's start is seen at the next quick tick, not at the monitor's next
        look at the queue. A pending job whose guard is up is started: the monitor is asked to look now."""
        waiting: dict[str, list[tuple[str, str]]] = {}
        for row, job in pairs:
            if (
                job is not None
                and row.node_host is None
                and row.state in WAITING
                and not JobState(job.state).is_terminal
            ):
                waiting.setdefault(row.cluster, []).append((row.job_id, row.session_dir))
        found: dict[tuple[str, str], tuple[str, int]] = {}
        for cluster, sessions in waiting.items():
            try:
                transport = self.ports.transport(cluster)
                if isinstance(transport, files.SessionFiles):
                    seen = await endpoints.read_all(transport, sessions)
                    found.update(((cluster, job_id), endpoint) for job_id, endpoint in seen.items())
            except SvcError as exc:  # a cluster out of reach: the next tick tries again
                log.info("sessions' endpoints on %s: %s", cluster, exc)
        pending = {(row.cluster, row.job_id) for row, job in pairs if job is not None and job.state == "PENDING"}
        for cluster in sorted({cluster for cluster, job_id in found if (cluster, job_id) in pending}):
            self.ports.monitor.poke(cluster)
        return found

    def _keep_monitor_quick(self, clusters: set[str]) -> None:
        """While a session waits to start, the monitor ticks every second on its cluster (as for a waiter), so
        the job's start is seen at once; afterwards the monitor's own pace is enough."""
        if clusters == self._watched:
            return
        self._watching.close()
        self._watching = contextlib.ExitStack()
        for cluster in sorted(clusters):
            self._watching.enter_context(self.ports.monitor.watch(cluster))
        self._watched = set(clusters)

    async def _step(
        self,
        row: InteractiveSessionRecord,
        job: JobRecord,
        spec: SessionKindSpec | None,
        endpoint: tuple[str, int] | None,
        now: datetime,
    ) -> None:
        """Gather what the job, the guard's files and the app say, let ``next_state`` decide, and apply it
        (``endpoint``: where the guard listens, when this tick's read found it)."""
        state = JobState(job.state)
        transport = self.ports.transport(row.cluster)
        if not isinstance(transport, files.SessionFiles):
            return
        guard_up = state is JobState.PENDING and endpoint is not None
        running = state is JobState.RUNNING or guard_up
        changes = _running(row, job, endpoint, now) if running else {}
        host: str | None = changes.get("node_host", row.node_host)
        port: int | None = changes.get("node_port", row.node_port)
        current = SessionState(row.state)
        answered = (
            running
            and current is not SessionState.READY
            and host is not None
            and port is not None
            and spec is not None
            and await self._answers(row, spec, host, port)
        )
        exit_code = await self._exit_code(row, transport) if state.is_terminal else None
        idle = current is SessionState.READY and state is JobState.RUNNING and await self._idle_over(row, spec, now)
        started = changes.get("started_at") or as_utc(row.started_at)
        facts = SessionFacts(
            state=current,
            job_state=state,
            now=now,
            started_at=started,
            start_timeout=row.start_timeout_seconds,
            endpoint_known=host is not None,
            guard_up=guard_up,
            app_answered=answered,
            app_exit_code=exit_code,
            ended_by_svc=EndReason.STOPPED
            if row.stop_requested_at is not None
            else (EndReason.IDLE_TIMEOUT if idle else None),
        )
        move = next_state(facts)
        if move.cancel_job:
            await self._cancel(row)
        if move.state is SessionState.ENDED:
            assert move.end_reason is not None  # noqa: S101 - next_state gives every end its reason
            detail = await self._detail(row, job, transport, move.end_reason, exit_code)
            await self._end(row, move.end_reason, detail, now=now, extra=changes)
            return
        if move.state is not current:
            changes["state"] = move.state.value
            if move.state is SessionState.READY:
                changes.update(ready_at=now, last_activity=now)
        await self._move(row, changes, now)

    async def _exit_code(self, row: InteractiveSessionRecord, transport: files.SessionFiles) -> int | None:
        """The app's exit code from the guard's ``exit.json`` (read once the job ended), or None."""
        exited = await files.read_json(transport, f"{row.session_dir}/exit.json")
        code = exited.get("code") if exited is not None else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    async def _detail(
        self,
        row: InteractiveSessionRecord,
        job: JobRecord,
        transport: files.SessionFiles,
        reason: EndReason,
        exit_code: int | None,
    ) -> str | None:
        """The words an ended session keeps: the app's exit code and stderr tail, the job's end, the idle time."""
        if reason is EndReason.APP_EXITED:
            tail = await self._stderr_tail(transport, job)
            return "\n".join(part for part in (f"exit code {exit_code}", tail) if part)
        if reason is EndReason.START_TIMEOUT:
            return await self._stderr_tail(transport, job)
        if reason is EndReason.JOB_ENDED:
            return f"the job ended {job.raw_state or job.state}"
        if reason is EndReason.IDLE_TIMEOUT:
            return f"no traffic for {row.idle_minutes} minutes"
        return None

    async def _answers(self, row: InteractiveSessionRecord, spec: SessionKindSpec, host: str, port: int) -> bool:
        answer = await self._get(row, spec, host, port, spec.ready_path)
        return answer is not None and answer.ok

    async def _get(
        self, row: InteractiveSessionRecord, spec: SessionKindSpec, host: str, port: int, path: str
    ) -> probe.Answer | None:
        transport = self.ports.transport(row.cluster)
        if not isinstance(transport, files.SessionFiles):
            return None
        secret = await secrets.secret_of(transport, row.cluster, row.job_id, row.session_dir)
        return await probe.get(
            self.ports.transport(row.cluster),
            host,
            port,
            base_path(row.cluster, row.job_id) + path,
            secret=secret,
            extra_headers=reach.kind_headers(spec, secret),
        )

    async def _idle_over(self, row: InteractiveSessionRecord, spec: SessionKindSpec | None, now: datetime) -> bool:
        """Whether a ready session's idle timeout has run out (no traffic, no busy kernel for its idle minutes);
        announces ``session.idle_warning`` once on the way, and takes it back when traffic came after it."""
        from svc_host.store import sessions as repo

        if not row.idle_minutes or spec is None:
            return False
        last = as_utc(row.last_activity) or as_utc(row.ready_at) or now
        if await self._busy(row, spec):
            await self.ports.store.run(repo.note_activity, {(row.cluster, row.job_id): now})
            return False
        idle_for = now - last
        if idle_for >= timedelta(minutes=row.idle_minutes):
            return True
        if row.idle_warned_at is None and idle_for >= idle_warning_after(row.idle_minutes):
            if await self.ports.store.run(
                repo.move, row.cluster, row.job_id, expected="ready", changes={"idle_warned_at": now}, now=now
            ):
                left = timedelta(minutes=row.idle_minutes) - idle_for
                self.ports.emit(
                    Event(
                        name=IDLE_WARNING,
                        payload={
                            "transport": row.cluster,
                            "job_id": row.job_id,
                            "kind": row.kind,
                            "idle_minutes": row.idle_minutes,
                            "ends_in_seconds": max(0, round(left.total_seconds())),
                        },
                    )
                )
        elif (warned := as_utc(row.idle_warned_at)) is not None and last > warned:
            await self.ports.store.run(
                repo.move, row.cluster, row.job_id, expected="ready", changes={"idle_warned_at": None}, now=now
            )
        return False

    async def _busy(self, row: InteractiveSessionRecord, spec: SessionKindSpec) -> bool:
        if spec.busy_path is None or row.node_host is None or row.node_port is None:
            return False
        return probe.busy(await self._get(row, spec, row.node_host, row.node_port, spec.busy_path))

    async def _stderr_tail(self, transport: files.SessionFiles, job: JobRecord) -> str | None:
        if not job.stderr_path:
            return None
        head = await transport.read_bytes(job.stderr_path, 0, 0)
        if head is None:
            return None
        found = await transport.read_bytes(job.stderr_path, max(0, head[1] - TAIL_BYTES), TAIL_BYTES)
        text = found[0].decode(errors="replace").strip() if found else ""
        return text or None

    async def _cancel(self, row: InteractiveSessionRecord) -> None:
        await self.ports.transport(row.cluster).cancel([row.job_id])
        self.ports.monitor.poke(row.cluster)

    async def _move(self, row: InteractiveSessionRecord, changes: dict[str, Any], now: datetime) -> bool:
        """Apply ``changes`` if the session is still in the state this tick read (``True`` then)."""
        from svc_host.store import sessions as repo

        if not changes:
            return False
        moved: bool = await self.ports.store.run(
            repo.move, row.cluster, row.job_id, expected=row.state, changes=changes, now=now
        )
        if moved and changes.get("state", row.state) != row.state:
            self._announce(row, changes)
        return moved

    async def _end(
        self,
        row: InteractiveSessionRecord,
        reason: EndReason,
        detail: str | None,
        *,
        now: datetime,
        extra: dict[str, Any] | None = None,
    ) -> None:
        changes = {**(extra or {}), "state": "ended", "end_reason": reason.value, "end_detail": detail, "ended_at": now}
        if detail is not None:
            changes["end_detail"] = detail[-TAIL_BYTES:]
        if await self._move(row, changes, now):
            transport = self.ports.transport(row.cluster)
            if isinstance(transport, files.SessionFiles):
                await cleanup.tidy(transport, row.session_dir)
        secrets.forget(row.cluster, row.job_id)

    def _announce(self, row: InteractiveSessionRecord, changes: dict[str, Any]) -> None:
        payload = {
            "transport": row.cluster,
            "job_id": row.job_id,
            "kind": row.kind,
            "from": row.state,
            "to": changes["state"],
            "end_reason": changes.get("end_reason"),
        }
        self.ports.emit(Event(name=STATUS_CHANGED, payload=payload))


def _running(
    row: InteractiveSessionRecord, job: JobRecord, endpoint: tuple[str, int] | None, now: datetime
) -> dict[str, Any]:
    """What a running job tells of its session: when it started (``now`` while the monitor still has it pending,
    its guard up), its time limit, where the guard listens."""
    changes: dict[str, Any] = {}
    if row.started_at is None:
        changes["started_at"] = (as_utc(job.started_at) if job.state == JobState.RUNNING.value else None) or now
    if job.time_limit_seconds is not None and row.time_limit_seconds != job.time_limit_seconds:
        changes["time_limit_seconds"] = job.time_limit_seconds
    if row.node_host is None and endpoint is not None:
        changes["node_host"], changes["node_port"] = endpoint
    return changes
