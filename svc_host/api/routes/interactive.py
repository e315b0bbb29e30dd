"""``/api/sessions`` and ``/api/session-kinds``: interactive sessions (a Slurm job running a web app, opened
through svc's way in). Not in the public REST spec; docs/interfaces.md says what was chosen.

Named ``interactive`` so it is not taken for ``svc_host.api.sessions`` (the dashboard's login sessions).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import Field

from svc_host.api.cluster import ClusterDep, named_cluster
from svc_host.api.deps import HostDep
from svc_host.api.params import JobId, error_responses
from svc_host.domain.profiles import PROFILE_NAME_PATTERN
from svc_host.errors import ConflictError, NotConfiguredError
from svc_host.sessions import manage, reach
from svc_host.sessions.request import SessionRequest

router = APIRouter(tags=["sessions"])

_ERRORS = error_responses(400, 404, 422, 502, 503)


class StartSession(SessionRequest):
    """POST /api/sessions: a ``SessionRequest`` and the cluster (``transport``, default the server's)."""

    transport: str | None = Field(
        default=None, pattern=PROFILE_NAME_PATTERN, description="The cluster (default: the server's)."
    )


@router.get("/api/session-kinds")
async def session_kinds(host: HostDep) -> list[dict[str, Any]]:
    """The kinds of session on offer, each with its form's JSON schema (the dashboard draws the form from it)."""
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "fields": spec.fields.model_json_schema(),
            "open_path": spec.open_path,
            "start_timeout": spec.start_timeout,
            "idle_minutes": spec.idle_minutes,
        }
        for spec in sorted(manage.kinds(host).values(), key=lambda spec: spec.name)
    ]


@router.post("/api/sessions", status_code=201, responses=_ERRORS)
async def start_session(body: StartSession, host: HostDep) -> dict[str, Any]:
    """Start a session: 201 with it (``queued``). An unknown kind or fields its form refuses: 400 with
    ``errors`` per field; nothing is written or submitted."""
    cluster = named_cluster(host, body.transport)
    request = SessionRequest.model_validate(body.model_dump(exclude={"transport"}))
    row = await manage.start(host, request, transport=cluster, source=host.source)
    return manage.views(host, [row])[0]


@router.get("/api/sessions", responses=error_responses(404))
async def list_sessions(
    host: HostDep,
    transport: str | None = Query(
        None, pattern=PROFILE_NAME_PATTERN, description="Only this cluster's sessions (default: every cluster's)."
    ),
) -> list[dict[str, Any]]:
    """Sessions newest first (ended ones too), of one cluster or of all."""
    cluster = named_cluster(host, transport) if transport is not None else None
    return manage.views(host, await manage.listed(host, cluster))


@router.get("/api/sessions/{job_id}", responses=error_responses(400, 404))
async def get_session(host: HostDep, job_id: JobId, transport: ClusterDep) -> dict[str, Any]:
    """One session: state, why it ended, node, times, time left."""
    return manage.views(host, [await manage.detail(host, transport, job_id)])[0]


@router.delete("/api/sessions/{job_id}", status_code=204, responses=_ERRORS)
async def stop_session(host: HostDep, job_id: JobId, transport: ClusterDep) -> Response:
    """Stop a session (its job is cancelled; it ends ``stopped``): 204; unknown 404; already ended 422."""
    await manage.stop(host, transport, job_id)
    return Response(status_code=204)


@router.post("/api/sessions/{job_id}/link", responses=error_responses(400, 404, 409, 503))
async def session_link(request: Request, host: HostDep, job_id: JobId, transport: ClusterDep) -> dict[str, str]:
    """A one-time link that opens a ready session in one browser within a minute, on the sessions' own origin
    (this server's name, the sessions port): ``{"url": ...}``. Not ready (queued, starting, ended): 409; the
    sessions port is off: 503; unknown: 404."""
    row = await manage.detail(host, transport, job_id)
    origin = getattr(request.app.state, "sessions_origin", None)
    port = getattr(request.app.state, "sessions_port", None)
    if origin is None or not port:
        raise NotConfiguredError(
            "interactive sessions are off on this server: it serves no sessions port "
            "(start svc serve with --sessions-port, or free the port after --port)"
        )
    if row.state != reach.READY:
        why = f" ({row.end_reason})" if row.end_reason else ""
        raise ConflictError(f"session {job_id} on {transport!r} is {row.state}{why}: only a ready session opens")
    spec = manage.kinds(host).get(row.kind)
    server = reach.server_address(request.url.hostname or "127.0.0.1", port, request.url.scheme)
    code = origin.mint_code(transport, job_id)
    return {"url": reach.entry_url(server, transport, job_id, spec.open_path if spec else "", code)}
