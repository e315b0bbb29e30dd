"""The plugin contract: every hook svc calls, with what it receives and what it must return.

Plugins implement these with ``svc_host.hookimpl`` and register a module in the entry-point group ``svc``::

    # pyproject.toml of a plugin
    [project.entry-points.svc]
    mysite = "svc_mysite.hooks"

Collect hooks (``svc_transports``, ``svc_sync_backends``, ``svc_renderers``, ``svc_api_routers``,
``svc_mcp_tools``) return a list of records from every plugin; the host merges them and refuses duplicate
names, naming every provider. ``svc_event`` is a broadcast: every implementation sees every event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from svc_host.domain.profiles import HostConfig
    from svc_host.plugin_types import Event, RendererSpec, SyncBackendSpec, ToolSpec, TransportSpec

hookspec = pluggy.HookspecMarker("svc")


@hookspec
def svc_transports(config: HostConfig) -> Sequence[TransportSpec]:
    """Offer ways to reach a Slurm cluster.

    Called whenever the host (re)builds its transport table, e.g. at server start and after a profile
    changes. ``config`` holds the SSH profiles the host knows and which one is current. Return one
    ``TransportSpec`` per transport; names must be unique across all plugins.

    Example::

        @hookimpl
        def svc_transports(config):
            return [TransportSpec(name="mysite", factory=MySiteTransport, description="site gateway")]
    """
    raise NotImplementedError


@hookspec
def svc_sync_backends() -> Sequence[SyncBackendSpec]:
    """Offer ways to copy a mount's local tree to the cluster.

    Called once when the host builds its backend table. Return ``SyncBackendSpec`` records.

    Example::

        @hookimpl
        def svc_sync_backends():
            return [SyncBackendSpec(name="rsync", factory=RsyncBackend)]
    """
    raise NotImplementedError


@hookspec
def svc_renderers() -> Sequence[RendererSpec]:
    """Offer batch-script renderers; the host's own ``default`` renderer is registered this way.

    ``render(definition: JobDefinition) -> RenderedScript`` must be pure and raise ``RenderError`` on
    a definition it cannot express.

    Example::

        @hookimpl
        def svc_renderers():
            return [RendererSpec(name="site", render=render_site_script)]
    """
    raise NotImplementedError


@hookspec
def svc_api_routers() -> Sequence[Any]:
    """Offer FastAPI ``APIRouter`` objects to mount on the REST app; the host's routers come this way too.

    Called once per app. Paths should live under ``/api/``. Import FastAPI inside the hook, not at module
    level, so the CLI stays fast.

    Example::

        @hookimpl
        def svc_api_routers():
            from fastapi import APIRouter
            router = APIRouter(prefix="/api/mysite")
            @router.get("/ping")
            async def ping() -> dict[str, bool]:
                return {"ok": True}
            return [router]
    """
    raise NotImplementedError


@hookspec
def svc_mcp_tools() -> Sequence[ToolSpec]:
    """Offer MCP tools; the host's tools are registered this way too.

    Every tool returns a dict with ``success`` and, on failure, ``error`` (see the MCP spec).

    Example::

        @hookimpl
        def svc_mcp_tools():
            async def ping() -> dict[str, object]:
                return {"success": True}
            return [ToolSpec(name="ping", function=ping, description="Check the server.", read_only=True)]
    """
    raise NotImplementedError


@hookspec
def svc_event(event: Event) -> None:
    """Observe something that happened: ``job.status_changed``, ``workflow_run.status_changed``,
    ``sweep_run.status_changed``. Called for every event; exceptions are logged and never stop the
    host. Return nothing.

    Example::

        @hookimpl
        def svc_event(event):
            if event.name == "job.status_changed" and event.payload["to"] == "FAILED":
                notify(event.payload)
    """
