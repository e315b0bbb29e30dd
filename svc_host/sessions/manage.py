"""Interactive sessions for every face: start, list, one session's detail, stop.

REST, MCP and the CLI all come here, so a session started from one is seen, opened and stopped the same way from
the others. A start is checked whole before anything is written (the kind exists, its form accepts the fields,
the resources are valid, the transport can run sessions); its files are then written into a fresh private
directory on the cluster, the job goes through the one submit service (so the monitor tracks it like any job),
and the session's row is recorded ``queued``. A start that fails after writing removes what it wrote; one whose
row cannot be recorded cancels the job it submitted.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from svc_host.domain.times import as_utc
from svc_host.domain.validation_words import describe_validation, field_problems
from svc_host.errors import InvalidRequestError, InvalidStateError, NotFoundError, SvcError
from svc_host.runtime.ports import Ports
from svc_host.services import jobs
from svc_host.sessions import files, secrets
from svc_host.sessions.request import SessionRequest
from svc_host.slurm.values import limit_seconds

if TYPE_CHECKING:
    from svc_host.plugin_core.records import SessionKindSpec
    from svc_host.store.tables import InteractiveSessionRecord

SESSIONS_DIR = ".svc/sessions"
"""Where sessions keep their files on a cluster: under the login directory (remote) or the home (local)."""


def kinds(ports: Ports) -> dict[str, SessionKindSpec]:
    """Every session kind on offer, by name."""
    return ports.plugins.session_kinds()


def kind_of(ports: Ports, name: str) -> SessionKindSpec:
    """The kind ``name``; an unknown name is an ``InvalidRequestError`` listing the kinds on offer."""
    offered = kinds(ports)
    if name not in offered:
        choices = ", ".join(sorted(offered)) or "none (no plugin offers session kinds)"
        raise InvalidRequestError(
            f"unknown session kind {name!r}; choose one of: {choices}",
            fields=[{"field": "kind", "message": f"unknown kind; choose one of: {choices}"}],
        )
    return offered[name]


def checked_fields(spec: SessionKindSpec, given: dict[str, Any]) -> BaseModel:
    """The kind's form filled with ``given``; what it refuses is an ``InvalidRequestError`` in words, each problem
    named by its field (``fields.logdir``)."""
    try:
        return spec.fields.model_validate(given)
    except ValidationError as exc:
        errors = [{**error, "loc": ("fields", *error.get("loc", ()))} for error in exc.errors()]
        raise InvalidRequestError(
            f"session kind {spec.name!r}: {describe_validation(errors)}", fields=field_problems(errors)
        ) from None


def session_transport(ports: Ports, name: str) -> files.SessionFiles:
    """The transport ``name`` when it can run sessions (commands and file reads on the cluster)."""
    target = ports.transport(name)
    if not isinstance(target, files.SessionFiles):
        raise InvalidRequestError(f"transport {name!r} cannot run sessions (it runs no commands on a cluster)")
    return target


async def start(ports: Ports, request: SessionRequest, *, transport: str, source: str) -> InteractiveSessionRecord:
    """Check, write the session's files, submit its job and record the session (``queued``)."""
    from svc_host.store import sessions as repo

    spec = kind_of(ports, request.kind)
    fields = checked_fields(spec, request.fields)
    try:
        resources = request.resources()
    except ValidationError as exc:
        raise InvalidRequestError(describe_validation(exc.errors()), fields=field_problems(exc.errors())) from None
    target = session_transport(ports, transport)
    base = await target.login_dir() if ports.transports.spec(transport).remote else _home()
    session_dir = f"{base.rstrip('/')}/{SESSIONS_DIR}/{uuid.uuid4().hex}"
    from svc_host.sessions import launch

    prepared = launch.prepare(spec, fields, resources=resources, session_dir=session_dir, cluster=transport)
    await files.make_private_dir(target, session_dir)
    try:
        for name, text in prepared.files.items():
            await files.write_private(target, f"{session_dir}/{name}", text)
        record = await jobs.submit(ports, prepared.definition, transport=transport, source=source)
    except BaseException:
        await files.remove_tree(target, session_dir)
        raise
    try:
        row = await ports.store.run(
            repo.add_session,
            cluster=transport,
            job_id=record.job_id,
            kind=spec.name,
            fields=fields.model_dump_json(),
            source=source,
            session_dir=session_dir,
            start_timeout_seconds=request.start_timeout or max(1, round(spec.start_timeout)),
            time_limit_seconds=limit_seconds(resources.time_limit) if resources.time_limit else None,
            idle_minutes=spec.idle_minutes,
        )
    except BaseException:
        await ports.transport(transport).cancel([record.job_id])
        raise
    secrets.keep(transport, record.job_id, prepared.secret)
    return row


def _home() -> str:
    import os

    return os.path.expanduser("~")


async def listed(ports: Ports, cluster: str | None = None) -> list[InteractiveSessionRecord]:
    """Sessions newest first, of one cluster or of every cluster."""
    from svc_host.store import sessions as repo

    return await ports.store.run(repo.list_sessions, cluster)


async def detail(ports: Ports, cluster: str, job_id: str) -> InteractiveSessionRecord:
    """One session; ``NotFoundError`` when no session has that id on that cluster."""
    from svc_host.store import sessions as repo

    row = await ports.store.run(repo.find_session, cluster, job_id)
    if row is None:
        raise NotFoundError(f"no session {job_id} on transport {cluster!r}")
    return row


def ended_words(row: InteractiveSessionRecord) -> str:
    """How an ended session is told to whoever waited to open it: its reason and the last line of its detail."""
    detail = f": {row.end_detail.splitlines()[-1]}" if row.end_detail else ""
    return f"session {row.job_id} on {row.cluster!r} ended ({row.end_reason}){detail}"


async def stop(ports: Ports, cluster: str, job_id: str) -> InteractiveSessionRecord:
    """Ask Slurm to end the session's job (``scancel``); the watch then ends the session ``stopped``. A session
    that already ended is an ``InvalidStateError``."""
    from svc_host.store import sessions as repo

    row = await detail(ports, cluster, job_id)
    if row.state == repo.ENDED:
        raise InvalidStateError(f"session {job_id} on {cluster!r} already ended ({row.end_reason}); nothing to stop")
    await ports.store.run(repo.request_stop, cluster, job_id, datetime.now(UTC))
    with contextlib.suppress(InvalidStateError):  # the job ended meanwhile: the watch ends it with its reason
        await jobs.cancel(ports, cluster, job_id)
    return await detail(ports, cluster, job_id)


def view(row: InteractiveSessionRecord, spec: SessionKindSpec | None, *, now: datetime | None = None) -> dict[str, Any]:
    """A session as every face shows it (never its secret): state, why it ended, where it runs, times, time left."""
    now = now or datetime.now(UTC)
    started = as_utc(row.started_at)
    left = None
    if row.time_limit_seconds and row.state != "ended":  # 0 is Slurm's no limit
        left = row.time_limit_seconds
        if started is not None:
            left = max(0, round(row.time_limit_seconds - (now - started).total_seconds()))
    return {
        "cluster": row.cluster,
        "job_id": row.job_id,
        "kind": row.kind,
        "fields": json.loads(row.fields),
        "state": row.state,
        "end_reason": row.end_reason,
        "end_detail": row.end_detail,
        "stopping": row.stop_requested_at is not None and row.state != "ended",
        "source": row.source,
        "node": row.node_host,
        "created_at": _iso(row.created_at),
        "started_at": _iso(row.started_at),
        "ready_at": _iso(row.ready_at),
        "ended_at": _iso(row.ended_at),
        "time_limit_seconds": row.time_limit_seconds,
        "time_left_seconds": left,
        "idle_minutes": row.idle_minutes,
        "last_activity": _iso(row.last_activity),
        "idle_warned_at": _iso(row.idle_warned_at),
        "open_path": spec.open_path if spec is not None else "",
    }


def _iso(moment: datetime | None) -> str | None:
    found = as_utc(moment)
    return found.isoformat() if found is not None else None


def views(ports: Ports, rows: list[InteractiveSessionRecord]) -> list[dict[str, Any]]:
    """``view`` of each row, with its kind's open path when the kind is still offered."""
    try:
        offered = kinds(ports)
    except SvcError:
        offered = {}
    return [view(row, offered.get(row.kind)) for row in rows]
