"""Single jobs for every interface: submit and record, read status from the store, logs, cancel.

REST, MCP and the CLI all go through these functions, so a job submitted from one is seen the same way
from the others. The store's repository is imported where it is used: importing this module (as the MCP
tools do when the server starts) costs no ORM.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.times import as_utc
from svc_host.errors import InvalidStateError, NotFoundError, TransportError
from svc_host.plugin_core.settings import render_job
from svc_host.runtime.ports import Ports
from svc_host.services.foreign_logs import check_log_owner
from svc_host.slurm import arrays
from svc_host.slurm.values import spell_time_limit
from svc_host.transports.base import LOG_CHUNK_LIMIT, LogChunk

if TYPE_CHECKING:
    from svc_host.domain.submission import JobDefinition
    from svc_host.settings.config import SvcConfig
    from svc_host.store.tables import JobRecord

MAX_TAIL_LINES = 100_000  # the most lines a log tail asks for (REST `tail_lines`, MCP `get_job_logs`)


async def submit(
    host: Ports, definition: JobDefinition, *, transport: str, source: str, config: SvcConfig | None = None
) -> JobRecord:
    """Render, submit, record (state PENDING) and tell the monitor; returns the stored record.

    ``config``: the job defaults to render with, when not the host's own (the svc agent renders with those
    of the directory the command ran in)."""
    from svc_host.store import jobs as job_repo

    config = config or host.config()
    rendered = render_job(host.plugins, definition, config)
    job_id = await host.transport(transport).submit(rendered)
    host.transports.snapshots.changed(transport)
    stdout_path, stderr_path = rendered.log_paths_for(job_id)
    if isinstance(definition.command, list):
        command = list(definition.command)
    elif definition.command is not None:
        command = [definition.command]
    else:
        command = []
    record = await host.store.run(
        job_repo.add_job,
        transport=transport,
        job_id=job_id,
        name=definition.name,
        source=source,
        resources=definition.resources.model_dump(),
        command=command,
        env_var_names=list(definition.environment.env_vars),
        work_dir=definition.work_dir,
        stdout_path=stdout_path,
        stderr_path=stderr_path,
    )
    host.monitor.poke(transport)
    return record


@dataclass(frozen=True)
class JobView:
    """A job as the interfaces show it: the stored record when svc submitted it, else the scheduler's word."""

    status: JobStatus
    record: JobRecord | None

    @property
    def command(self) -> list[str]:
        return list(json.loads(self.record.command)) if self.record else []


async def status(host: Ports, transport: str, job_id: str) -> JobView:
    """The job's current status; tracked jobs come from the store after a (coalesced) monitor refresh."""
    from svc_host.store import jobs as job_repo

    record = await host.store.run(job_repo.find_job, transport, job_id)
    if record is not None:
        if not JobState(record.state).is_terminal:
            changes = await host.monitor.refresh(transport)
            if any(change.job_id == job_id for change in changes):
                record = await host.store.run(job_repo.find_job, transport, job_id) or record
        return JobView(status=status_of(record), record=record)
    found = await host.transport(transport).describe(job_id)
    if found is None:
        raise NotFoundError(f"job {job_id} not found on transport {transport!r}")
    return JobView(status=found, record=None)


async def current(host: Ports, transport: str, job_id: str) -> JobView:
    """``status`` for a caller that shows a job's state and nothing the store derives from it (MCP
    ``get_job_status``; REST's detail, which lists the stored transitions, reads ``status``).

    A live job svc tracks is answered from the scheduler's line (``Monitor.sighting``: the queue's snapshot
    while fresh, else ``squeue`` of this job alone), named and with log paths as recorded; a transition it
    shows is stored by the monitor after the answer, the elapsed time and the like at the monitor's next tick,
    as for any other job. The line is asked for alongside the store's read of the job when the monitor last saw
    the job live (the read's worker thread then overlaps the command: ~1.5 ms less after a pause), after it
    otherwise, so a job that ended costs no command. An ended job, one the scheduler no longer lists, and one
    svc does not track are ``status``'s."""
    from svc_host.store import jobs as job_repo

    monitor = host.monitor
    finding = host.store.run(job_repo.find_job, transport, job_id)
    asked_at_once = monitor.seen_live(transport, job_id)
    if asked_at_once:
        record, sighting = await asyncio.gather(finding, monitor.sighting(transport, job_id))
    else:
        record, sighting = await finding, None
    if record is None or JobState(record.state).is_terminal:
        return await status(host, transport, job_id)
    if not asked_at_once:
        sighting = await monitor.sighting(transport, job_id)
    if sighting is None:
        return await status(host, transport, job_id)
    seen, observed_at = sighting
    if seen.state.value != record.state:  # a transition: stored after the answer (the rest at the next tick)
        monitor.record(transport, job_id, seen, observed_at)
    named = {
        "name": record.name,
        "stdout_path": record.stdout_path or seen.stdout_path,
        "stderr_path": record.stderr_path or seen.stderr_path,
    }
    return JobView(status=seen.model_copy(update=named), record=record)


_USERS: dict[tuple[str, str], str] = {}
"""User names of uids, per cluster (they do not change while svc runs; at most ``_USERS_KEPT``)."""
_USERS_KEPT = 1024


async def cancelled_by(host: Ports, transport: str, raw_state: str) -> str | None:
    """Who cancelled a job whose state says ``CANCELLED by <uid>``: the user name the cluster's passwd gives the
    uid, else the uid itself; ``None`` when the state names nobody."""
    from svc_host.slurm.cancelled import canceller_uid, getent_argv, user_of
    from svc_host.transports.base import SlurmTransport

    uid = canceller_uid(raw_state)
    if uid is None:
        return None
    known = _USERS.get((transport, uid))
    if known is not None:
        return known
    target = host.transport(transport)
    if not isinstance(target, SlurmTransport):
        return uid
    try:
        result = await target.run(getent_argv(uid), timeout=10)
    except TransportError:
        return uid
    name = user_of(result.stdout, uid) if result.exit_code == 0 else None
    if name is None:
        return uid
    if len(_USERS) >= _USERS_KEPT:
        _USERS.clear()
    _USERS[(transport, uid)] = name
    return name


def status_of(record: JobRecord) -> JobStatus:
    """The stored record in the shape transports report."""

    return JobStatus(
        job_id=record.job_id,
        state=JobState(record.state),
        raw_state=record.raw_state,
        name=record.name,
        partition=record.partition,
        nodes=record.nodes,
        gpus=record.gpus,
        elapsed_seconds=record.elapsed_seconds,
        time_limit=spell_time_limit(record.time_limit_seconds) if record.time_limit_seconds is not None else None,
        exit_code=record.exit_code,
        node_list=record.node_list,
        stdout_path=record.stdout_path,
        stderr_path=record.stderr_path,
        started_at=as_utc(record.started_at),
        ended_at=as_utc(record.ended_at),
    )


async def cancel(host: Ports, transport: str, job_id: str) -> JobStatus:
    """Cancel a pending or running job; a finished one is an ``InvalidStateError``."""
    view = await status(host, transport, job_id)
    if view.status.state.is_terminal:
        raise InvalidStateError(f"job {job_id} already ended ({view.status.raw_state}); nothing to cancel")
    await host.transport(transport).cancel([job_id])
    host.transports.snapshots.changed(transport)
    host.monitor.poke(transport)
    return view.status


async def cancel_tasks(host: Ports, transport: str, range_id: str) -> list[str]:
    """Cancel the tasks of range ``range_id`` (``123_[1-3]``) that are pending or running, with one ``scancel`` of
    the range; returns their ids. A range with no live task is an ``InvalidStateError`` when the array exists, else
    a ``NotFoundError``."""
    array = arrays.array_of(range_id) or range_id
    queue = await host.transports.snapshots.queue(transport, max_age=0)
    live = [job.job_id for job in queue.value if not job.state.is_terminal and arrays.in_range(range_id, job.job_id)]
    if not live:
        if await host.transport(transport).describe(array) is None:
            raise NotFoundError(f"job array {array} not found on transport {transport!r}")
        raise InvalidStateError(f"no task of {range_id} is pending or running; nothing to cancel")
    await host.transport(transport).cancel([range_id])
    host.transports.snapshots.changed(transport)
    host.monitor.poke(transport)
    return live


@dataclass(frozen=True)
class JobLogs:
    stdout: LogChunk | None
    stderr: LogChunk | None


async def logs(
    host: Ports,
    transport: str,
    job_id: str,
    *,
    stdout_offset: int = 0,
    stderr_offset: int = 0,
    limit: int = LOG_CHUNK_LIMIT,
    job_name: str | None = None,
    log_dir: str | None = None,
    tail: bool = False,
) -> JobLogs:
    """Both logs of a job from byte offsets, using the paths recorded at submit (or the scheduler's).

    With ``job_name`` (the MCP spec's "helps locate log files") a job whose paths neither svc nor the scheduler
    knows, even one the scheduler has forgotten, is looked for where svc writes logs: ``<log_dir>/<name>-<id>.out``
    and ``.err``, ``log_dir`` being the configured one unless given; ``NotFoundError`` when the job is unknown and
    neither file is there. With ``tail`` the offsets are ignored and each log is read from ``limit`` bytes before
    its end. The logs of a job svc did not submit are read only from files its user owns (``foreign_logs``).
    """
    foreign: JobStatus | None = None
    try:
        view = await status(host, transport, job_id)
    except NotFoundError:
        if not job_name:
            raise
        forgotten = True
        stdout_path = stderr_path = None
    else:
        forgotten = False
        stdout_path, stderr_path = view.status.stdout_path, view.status.stderr_path
        foreign = view.status if view.record is None and stdout_path else None
    if not stdout_path and job_name:
        from svc_host.domain.submission import JobDefinition  # its models: not for commands that submit nothing

        stem = JobDefinition(name=job_name, command="true").file_stem
        folder = log_dir or host.config().log_dir
        stdout_path, stderr_path = f"{folder}/{stem}-{job_id}.out", f"{folder}/{stem}-{job_id}.err"
    target = host.transport(transport)

    async def read(path: str, offset: int) -> LogChunk:
        if foreign is not None and not await check_log_owner(target, path, job_id, foreign.user):
            return LogChunk(path=path, content="", offset=offset, next_offset=offset, size=None)
        if tail:
            probe = await target.read_log(path, offset=0, limit=1)
            if probe.size is None:
                return probe
            offset = max(0, probe.size - limit)
        return await target.read_log(path, offset=offset, limit=limit)

    out = await read(stdout_path, stdout_offset) if stdout_path else None
    err = None
    if stderr_path and stderr_path != stdout_path:
        err = await read(stderr_path, stderr_offset)
    if forgotten and not any(chunk is not None and chunk.exists for chunk in (out, err)):
        raise NotFoundError(
            f"job {job_id} not found on transport {transport!r}, and no log of a job named {job_name!r} at "
            f"{stdout_path} or {stderr_path}"
        )
    return JobLogs(stdout=out, stderr=err)


def last_lines(chunk: LogChunk, count: int) -> LogChunk:
    """The last ``count`` lines of a chunk (a final newline ends a line, it does not start one), with the
    offset where they begin (exact for UTF-8 text)."""
    text = chunk.content
    cut = len(text) - 1 if text.endswith("\n") else len(text)
    for _ in range(count):
        cut = text.rfind("\n", 0, cut)
        if cut < 0:
            return chunk
    kept = text[cut + 1 :]
    return chunk.model_copy(update={"content": kept, "offset": chunk.next_offset - len(kept.encode())})


def history_view(record: JobRecord) -> dict[str, Any]:
    """One history row: what was submitted where, by which interface, how it ended (no secret values) and how
    efficiently it used what it asked for (``None`` until accounting gave its usage)."""
    from svc_host.services.efficiency import efficiency_of

    return {
        "id": record.id,
        "job_id": record.job_id,
        "name": record.name,
        "transport": record.transport,
        "source": record.source,
        "status": record.state,
        "raw_state": record.raw_state,
        "exit_code": record.exit_code,
        "partition": record.partition,
        "nodes": record.nodes,
        "gpus": record.gpus,
        "resources": json.loads(record.resources),
        "command": json.loads(record.command),
        "env_var_names": json.loads(record.env_var_names),
        "work_dir": record.work_dir,
        "stdout_path": record.stdout_path,
        "stderr_path": record.stderr_path,
        "submitted_at": record.submitted_at.isoformat(),
        "started_at": record.started_at.isoformat() if record.started_at else None,
        "ended_at": record.ended_at.isoformat() if record.ended_at else None,
        "elapsed_seconds": record.elapsed_seconds,
        "efficiency": efficiency_of(record),
    }
