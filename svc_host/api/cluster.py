"""The cluster a request is about: ``?transport=<name>`` (the name MCP's tools take), else the server's default.

A job is known by its cluster and its id: two clusters number their jobs independently, so every route that
names a job takes this parameter, and a job from another cluster is never answered in its place.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from svc_host.api.deps import HostDep
from svc_host.domain.profiles import PROFILE_NAME_PATTERN
from svc_host.errors import NotFoundError, PluginError
from svc_host.host import Host


async def cluster_of(
    host: HostDep,
    transport: str | None = Query(
        None,
        pattern=PROFILE_NAME_PATTERN,
        description="The cluster: an SSH profile name or `local` (this machine's Slurm). Default: the server's.",
    ),
) -> str:
    """The named cluster, which must be on offer (404 lists the choices), or the server's default; it counts as
    looked at (its live numbers are kept for a while). A coroutine: FastAPI runs a plain function dependency in a
    worker thread, a hop on every job request."""
    name = named_cluster(host, transport)
    host.clusters_in_use.mark(name)
    return name


def named_cluster(host: Host, name: str | None) -> str:
    """``name`` when a cluster of that name is on offer (else 404 listing the choices); ``None``: the server's
    default, as it is now (what a run, sweep or schedule then records)."""
    if name is None:
        return host.server_transport_name()
    try:
        host.transports.spec(name)
    except PluginError:
        known = ", ".join(sorted(host.transports.specs()))
        raise NotFoundError(f"cluster {name!r} not found; choose one of: {known}") from None
    return name


ClusterDep = Annotated[str, Depends(cluster_of)]
"""Use as a parameter type: ``async def handler(host: HostDep, transport: ClusterDep) -> ...``."""
