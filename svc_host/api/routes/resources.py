"""``GET /api/resources``: GPU and node availability per partition (one sinfo + one squeue per call)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from svc_host.api.deps import HostDep

router = APIRouter(prefix="/api", tags=["resources"])


@router.get("/resources")
async def resources(
    host: HostDep, partition: str | None = Query(None, description="Only this partition.")
) -> list[dict[str, Any]]:
    """One snapshot per partition; an unknown partition gives an empty array."""
    snapshots = await host.transport(host.server_transport_name()).resources(partition)
    return [snap.model_dump(mode="json") for snap in snapshots]
