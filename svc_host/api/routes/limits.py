"""``GET /api/limits``: the site's job-count limits for the user of one transport, with what each counts now."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from svc_host.api.deps import HostDep
from svc_host.api.params import error_responses
from svc_host.services.limits import limits_view

router = APIRouter(prefix="/api", tags=["resources"])


@router.get("/limits", responses=error_responses(400, 404, 502))
async def limits(
    host: HostDep,
    profile: str | None = Query(
        None, max_length=200, description="SSH profile name or 'local'; the server's transport when absent."
    ),
) -> dict[str, Any]:
    """The limits that make sbatch refuse jobs (``submit_limits``: what svc's throttle keeps workflows and sweeps
    under) and those that keep jobs pending (``run_limits``), each with ``in_queue``, the jobs it counts now;
    ``MaxArraySize``, ``MaxJobCount``, every QOS that sets a limit, and how many runs wait to submit. Read
    from the cluster once per profile and kept an hour."""
    return await limits_view(host, profile or host.server_transport_name())
