"""``GET /api/resources``: GPU and node availability per partition (one sinfo + one squeue per refresh of the
shared snapshot, whatever the number of clients); ``GET /api/resources/total``: the same of the whole cluster;
``GET /api/resources/cluster``: which Slurm cluster a transport reaches; ``GET /api/resources/history``: GPU use
per partition over time, as the server's sampler stored it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Query, Response

from svc_host.api.cluster import ClusterDep
from svc_host.api.deps import HostDep
from svc_host.api.encoding import encode_json
from svc_host.api.params import error_responses
from svc_host.api.snapshot_headers import SNAPSHOT_RESPONSE, snapshot_headers
from svc_host.domain.resources import ResourceSnapshot
from svc_host.runtime.sampler import history_series
from svc_host.store import resource_samples

router = APIRouter(prefix="/api", tags=["resources"])


@router.get(
    "/resources", response_model=list[ResourceSnapshot], responses={**error_responses(502, 503), **SNAPSHOT_RESPONSE}
)
async def resources(
    host: HostDep,
    transport: ClusterDep,
    partition: str | None = Query(
        None, max_length=256, pattern=r"^[A-Za-z0-9_.-]+$", description="Only this partition (a Slurm partition name)."
    ),
) -> Response:
    """One snapshot per partition; an unknown partition gives an empty array. The answer is shared by every
    client and at most about a second old; ``X-Svc-Snapshot-Age`` says how old."""
    found = await host.transports.snapshots.resources(transport, partition)

    async def encode(snapshots: list[ResourceSnapshot]) -> bytes:
        return encode_json([snap.model_dump(mode="json") for snap in snapshots])

    body = await found.derive("GET /api/resources", encode)
    return Response(body, media_type="application/json", headers=snapshot_headers(found))


@router.get(
    "/resources/total",
    response_model=ResourceSnapshot,
    responses={**error_responses(404, 502, 503), **SNAPSHOT_RESPONSE},
)
async def resources_total(host: HostDep, transport: ClusterDep) -> Response:
    """The whole cluster in one snapshot (``partition: "all"``): each node counted once, however many partitions
    hold it, so a node in two partitions does not count twice as ``GET /api/resources`` summed would."""
    found = await host.transports.snapshots.resources_total(transport)

    async def encode(snapshot: ResourceSnapshot) -> bytes:
        return encode_json(snapshot.model_dump(mode="json"))

    body = await found.derive("GET /api/resources/total", encode)
    return Response(body, media_type="application/json", headers=snapshot_headers(found))


@router.get("/resources/cluster", responses=error_responses(404, 502, 503))
async def resources_cluster(host: HostDep, transport: ClusterDep) -> dict[str, Any]:
    """Which Slurm cluster the transport reaches, as ``scontrol show config`` names it: ``{transport, name,
    controllers, port, key}`` (``key`` compares two answers: profiles with one key reach one cluster); every field
    but ``transport`` is null for a transport that cannot tell. Asked once and kept for a day (a profile whose
    connection settings change asks again)."""
    identity = (await host.transports.snapshots.identity(transport)).value
    if identity is None:
        return {"transport": transport, "name": None, "controllers": None, "port": None, "key": None}
    return {
        "transport": transport,
        "name": identity.name,
        "controllers": list(identity.controllers),
        "port": identity.port,
        "key": identity.key,
    }


@router.get("/resources/history")
async def resources_history(
    host: HostDep,
    transport: ClusterDep,
    hours: float = Query(24, gt=0, le=24 * 366, description="How far back, in hours."),
) -> dict[str, Any]:
    """The cluster's GPU use per partition over the last ``hours``: ``{transport, hours,
    interval_seconds, series: [{partition, points: [{timestamp, total_gpus, gpus_in_use, jobs_running,
    nodes_down}]}]}``, oldest point first; long ranges are averaged into at most 720 points per partition."""
    until = datetime.now(UTC)
    since = until - timedelta(hours=hours)
    samples = await host.store.run(resource_samples.samples_since, transport, since)
    return {
        "transport": transport,
        "hours": hours,
        "interval_seconds": host.resource_sampler.settings.interval,
        "series": history_series(samples, since=since, until=until),
    }
