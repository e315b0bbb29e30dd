"""``GET /api/plugins``: installed plugins and the transports they offer."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from svc_host.errors import PluginError

router = APIRouter(prefix="/api", tags=["plugins"])


@router.get("/plugins")
async def list_plugins(request: Request) -> dict[str, Any]:
    """Every plugin (name, distribution, version, hooks, status, error) and the transport table."""
    transports = request.app.state.transports
    try:
        offered = [
            {"name": spec.name, "description": spec.description, "remote": spec.remote}
            for spec in transports.specs().values()
        ]
        transport_error = None
    except PluginError as exc:
        offered, transport_error = [], str(exc)
    return {
        "plugins": [info.as_dict() for info in request.app.state.plugins.plugins()],
        "transports": offered,
        "transport_error": transport_error,
    }
