"""``GET /api/resources``: GPU and node availability per partition (one sinfo + one squeue per call);
``GET /api/resources/history``: GPU use per partition over time, as the server's sampler stored it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Query

from svc_host.api.deps import HostDep
from svc_host.api.params import error_responses
from svc_host.resource_sampler import history_series
from svc_host.store import resource_samples

router = APIRouter(prefix="/api", tags=["resources"])


@router.get("/resources", responses=error_responses(502, 503))
async def resources(
    host: HostDep,
    partition: str | None = Query(
        None, max_length=256, pattern=r"^[A-Za-z0-9_.-]+$", description="Only this partition (a Slurm partition name)."
    ),
) -> list[dict[str, Any]]:
    """One snapshot per partition; an unknown partition gives an empty array."""
    snapshots = await host.transport(host.server_transport_name()).resources(partition)
    return [snap.model_dump(mode="json") for snap in snapshots]


@router.get("/resources/history")
async def resources_history(
    host: HostDep,
    hours: float = Query(24, gt=0, le=24 * 366, description="How far back, in hours."),
) -> dict[str, Any]:
    """The server transport's GPU use per partition over the last ``hours``: ``{transport, hours,
    interval_seconds, series: [{partition, points: [{timestamp, total_gpus, gpus_in_use, jobs_running,
    nodes_down}]}]}``, oldest point first; long ranges are averaged into at most 720 points per partition."""
    transport = host.server_transport_name()
    until = datetime.now(UTC)
    since = until - timedelta(hours=hours)
    samples = await host.store.run(resource_samples.samples_since, transport, since)
    return {
        "transport": transport,
        "hours": hours,
        "interval_seconds": host.resource_sampler.settings.interval,
        "series": history_series(samples, since=since, until=until),
    }
