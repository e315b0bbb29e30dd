"""``svc_event`` gets the host like the other hooks: an observer that declares ``host`` receives the process's
``PluginHost``; one that takes only ``event`` keeps working."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from svc_host import hookimpl
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.plugin_core.view import PluginHost


async def test_an_observer_declaring_host_gets_the_host_and_one_without_keeps_working(
    svc_test_host: Host, svc_register_plugin: Callable[..., Any]
) -> None:
    seen: list[tuple[str, object]] = []

    def with_host(event: Event, host: PluginHost | None) -> None:
        assert host is not None
        seen.append(("with host", host.paths))

    def without(event: Event) -> None:
        seen.append(("event only", event.name))

    svc_register_plugin(SimpleNamespace(svc_event=hookimpl(with_host)), "new")
    svc_register_plugin(SimpleNamespace(svc_event=hookimpl(without)), "old")
    svc_test_host.emit(Event(name="job.status_changed", payload={"transport": "local", "job_id": "7", "to": "FAILED"}))
    assert sorted(seen, key=str) == [("event only", "job.status_changed"), ("with host", svc_test_host.paths)]
