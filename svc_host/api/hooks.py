"""The host's own REST routers, registered through ``svc_api_routers`` like any plugin's. (The dashboard's event
stream hears every event through the host's one change path, ``Host.emit``, whichever interfaces are loaded.)"""

from __future__ import annotations

from typing import Any

from svc_host.plugin_core.identity import hookimpl


@hookimpl
def svc_api_routers() -> list[Any]:
    from svc_host.api.routes import (
        config,
        dashboard,
        events,
        files,
        history,
        interactive,
        jobs,
        limits,
        pending,
        plugins,
        profiles,
        resources,
        schedules,
        sweeps,
        web,
        workflow_preview,
        workflows,
    )

    return [
        plugins.router,
        jobs.router,
        pending.router,
        resources.router,
        limits.router,
        history.router,
        config.router,
        profiles.router,
        files.router,
        workflow_preview.router,
        workflows.router,
        sweeps.router,
        schedules.router,
        interactive.router,
        events.router,
        dashboard.router,
        web.router,  # last: the dashboard answers every other page path
    ]
