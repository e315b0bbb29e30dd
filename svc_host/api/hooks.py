"""The host's own REST routers, registered through ``svc_api_routers`` like any plugin's."""

from __future__ import annotations

from typing import Any

from svc_host import hookimpl


@hookimpl
def svc_api_routers() -> list[Any]:
    from svc_host.api.routes.plugins import router as plugins_router

    return [plugins_router]
