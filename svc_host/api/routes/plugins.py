"""``GET /api/plugins``: installed plugins (with their own health report), the transports they offer, and the
one the server uses."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter

from svc_host.api.deps import HostDep
from svc_host.errors import PluginError

router = APIRouter(prefix="/api", tags=["plugins"])


@router.get("/plugins")
async def list_plugins(host: HostDep) -> dict[str, Any]:
    """Every plugin (name, distribution, version, hooks, status, error, health), the transport table, and
    ``server_transport``: the transport REST endpoints use. ``health`` is what the plugin's ``svc_health``
    says (``{ok, summary, details}``), or null. A transport its plugin cannot make now (not configured) has
    ``usable: false`` and ``unusable_reason`` saying what to set; the dashboard lists only usable ones."""
    try:
        offered = []
        for spec in host.transports.specs().values():
            reason = host.transports.unusable_reason(spec.name)
            offered.append(
                {
                    "name": spec.name,
                    "description": spec.description,
                    "remote": spec.remote,
                    "mounts": spec.mounts,
                    "usable": reason is None,
                    "unusable_reason": reason,
                }
            )
        transport_error = None
    except PluginError as exc:
        offered, transport_error = [], str(exc)
    health = await asyncio.to_thread(host.plugins.health, host.paths)  # plugins read their files
    return {
        "plugins": [
            {**info.as_dict(), "health": health[info.name].as_dict() if info.name in health else None}
            for info in host.plugins.plugins()
        ],
        "transports": offered,
        "transport_error": transport_error,
        "server_transport": host.server_transport_name(),
    }
