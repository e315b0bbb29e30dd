"""The host's own REST routers, registered through ``svc_api_routers`` like any plugin's."""

from __future__ import annotations

from typing import Any

from svc_host import hookimpl


@hookimpl
def svc_api_routers() -> list[Any]:
    from svc_host.api.routes import config, files, history, jobs, plugins, profiles, resources, sweeps, workflows

    return [
        plugins.router,
        jobs.router,
        resources.router,
        history.router,
        config.router,
        profiles.router,
        files.router,
        workflows.router,
        sweeps.router,  # after workflows: its lifespan (the orchestrator) ends before the engine's
    ]
