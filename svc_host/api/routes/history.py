"""``/api/history``: jobs svc submitted, newest first, outcome statistics, and the efficiency of ended jobs,
workflow runs and sweeps."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from fastapi import APIRouter, Path, Query, Response

from svc_host.api.cluster import ClusterDep
from svc_host.api.deps import HostDep, SharedReadsDep
from svc_host.api.encoding import encode_json, json_body
from svc_host.api.params import MAX_OFFSET, MAX_ROW_ID, JobId, error_responses
from svc_host.domain.profiles import PROFILE_NAME_PATTERN
from svc_host.errors import InvalidRequestError
from svc_host.services import efficiency as efficiency_views
from svc_host.services import jobs
from svc_host.store import jobs as job_repo

router = APIRouter(prefix="/api/history", tags=["history"])

HISTORY_CLUSTER = (
    "Only the jobs of this cluster (an SSH profile name or `local`; a deleted profile's jobs stay readable). "
    "Default: every cluster."
)


@router.get("", response_model=list[dict[str, Any]])
async def history(
    host: HostDep,
    reads: SharedReadsDep,
    limit: int = Query(100, ge=1, le=1000, description="At most this many records (default 100)."),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
    transport: str | None = Query(None, pattern=PROFILE_NAME_PATTERN, description=HISTORY_CLUSTER),
    status: str | None = Query(None, max_length=100, description="Only jobs in this status, e.g. FAILED."),
    source: str | None = Query(None, max_length=100, description="web, mcp, cli or workflow."),
) -> Response:
    """Recent job execution history, newest first."""

    async def read() -> bytes:
        rows = await host.store.run(
            job_repo.history, limit=limit, offset=offset, transport=transport, state=status, source=source
        )
        return encode_json([jobs.history_view(row) for row in rows])

    return json_body(await reads.run(("GET /api/history", limit, offset, transport, status, source), read))


def _day_start(value: str | None, name: str, *, end: bool = False) -> datetime | None:
    if value is None:
        return None
    try:
        if "T" in value:
            parsed = datetime.fromisoformat(value)
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        day = date.fromisoformat(value)
    except ValueError as exc:
        raise InvalidRequestError(f"'{name}' must be an ISO date such as 2026-11-22, got {value!r}") from exc
    moment = datetime.combine(day, time(), tzinfo=UTC)
    return moment + timedelta(days=1) if end else moment


@router.get("/stats", responses=error_responses(400, e400="'from' or 'to' is not an ISO date, or 'from' > 'to'"))
async def history_stats(
    host: HostDep,
    from_: str | None = Query(None, alias="from", max_length=64, description="First day (ISO date), inclusive."),
    to: str | None = Query(None, max_length=64, description="Last day (ISO date), inclusive."),
    transport: str | None = Query(None, pattern=PROFILE_NAME_PATTERN, description=HISTORY_CLUSTER),
) -> dict[str, Any]:
    """Totals per outcome, the mean runtime and the aggregate efficiency of finished jobs submitted between
    ``from`` and ``to``, on one cluster (``transport``) or on every cluster."""
    since, until = _day_start(from_, "from"), _day_start(to, "to", end=True)
    if since and until and since >= until:
        raise InvalidRequestError("'from' must not be after 'to'")
    return await host.store.run(job_repo.history_stats, since=since, until=until, transport=transport)


@router.get("/efficiency/jobs/{job_id}", responses=error_responses(400, 404, 422))
async def job_efficiency(
    host: HostDep,
    transport: ClusterDep,
    job_id: JobId,
) -> dict[str, Any]:
    """CPU, memory and time efficiency of one job svc submitted, with suggestions once it completed."""
    return await efficiency_views.for_job(host, transport, job_id)


@router.get("/efficiency/runs/{run_id}", responses=error_responses(404))
async def run_efficiency(host: HostDep, run_id: str = Path(max_length=64)) -> dict[str, Any]:
    """Efficiency of each job of a workflow run (current attempts) and over the run."""
    return await efficiency_views.for_run(host, run_id)


@router.get("/efficiency/sweeps/{sweep_id}", responses=error_responses(404, 422))
async def sweep_efficiency(host: HostDep, sweep_id: int = Path(ge=1, le=MAX_ROW_ID)) -> dict[str, Any]:
    """Efficiency of every job of a sweep's cells and over the sweep."""
    return await efficiency_views.for_sweep(host, sweep_id)
