"""The host's own REST routers, registered through ``svc_api_routers`` like any plugin's, and the relay of every
event to the dashboard's event stream (``svc_event``, like any observer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_host.plugin_core.identity import hookimpl

if TYPE_CHECKING:
    from svc_host.plugin_core.records import Event


@hookimpl
def svc_api_routers() -> list[Any]:
    from svc_host.api.routes import (
        config,
        dashboard,
        events,
        files,
        history,
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
        events.router,
        dashboard.router,
        web.router,  # last: the dashboard answers every other page path
    ]


@hookimpl
def svc_event(event: Event) -> None:
    from svc_host.runtime.events import event_hub

    event_hub().publish(event)
