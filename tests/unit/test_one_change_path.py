"""Every listener hears a change the same way, whichever interfaces are loaded: ``Host.emit`` feeds the process's
event hub (the dashboard's stream, MCP waits) and the ``svc_event`` observers. A server without the REST package's
hooks still wakes its MCP waits at once (they used to fall back to polling every few seconds)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from svc_host.host import Host
from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.manager import PluginManager
from svc_host.plugin_core.records import Event
from svc_host.runtime.events import event_hub
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore


async def test_the_hub_and_the_observers_hear_a_change_without_the_rest_interface(svc_paths: SvcPaths) -> None:
    plugins = PluginManager(strict=True)
    plugins.load_builtins(("svc_host.rendering.hooks", "svc_host.mcp.hooks"))  # an MCP server: no REST package
    observed: list[str] = []
    plugins.register(SimpleNamespace(svc_event=hookimpl(lambda event: observed.append(event.name))), "observer")
    host = Host(paths=svc_paths, plugins=plugins, profiles=ProfileStore(Path(svc_paths.profiles_file)), source="mcp")
    subscription = event_hub().subscribe({"job.status_changed"})
    try:
        host.emit(Event(name="job.status_changed", payload={"transport": "local", "job_id": "7", "to": "RUNNING"}))
        batch = await subscription.next_batch(10.0)
    finally:
        subscription.close()
        await host.close()
    assert batch is not None
    assert [event.name for event in batch] == ["job.status_changed"]
    assert observed == ["job.status_changed"]
