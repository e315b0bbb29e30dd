"""Registering plugin objects: hooks are found the way every pluggy in svc's range looks them up (1.7 statically,
with ``inspect.getattr_static``), and a plugin that implements no hook is refused instead of silently doing nothing."""

from __future__ import annotations

import inspect
import logging
from importlib.metadata import EntryPoint
from types import SimpleNamespace
from typing import Any

import pytest

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig
from svc_host.errors import PluginError
from svc_host.plugin_core import manager as manager_module
from svc_host.plugin_core.manager import PluginManager
from svc_host.plugin_core.records import Event, TransportSpec
from svc_host.testing.fake import FakeTransport, transport_plugin


def test_a_namespace_plugin_is_called(svc_plugin_manager: PluginManager) -> None:
    seen: list[str] = []
    svc_plugin_manager.register(SimpleNamespace(svc_event=hookimpl(lambda event: seen.append(event.name))), "seer")
    svc_plugin_manager.emit(Event(name="job.submitted", payload={}))
    assert seen == ["job.submitted"]
    (info,) = [info for info in svc_plugin_manager.plugins() if info.name == "seer"]
    assert info.hooks == ["svc_event"]


def test_a_namespace_plugin_shows_its_hooks_to_a_static_lookup() -> None:
    """pluggy 1.7 finds hooks with inspect.getattr_static, which never reaches a proxy's __getattr__."""

    def transports(config: HostConfig) -> list[TransportSpec]:
        return []

    hook = hookimpl(transports)
    seen_by_pluggy = manager_module._hashable(SimpleNamespace(svc_transports=hook, SVC_DELIVERS=("a.b",)))
    assert inspect.getattr_static(seen_by_pluggy, "svc_transports") is hook
    assert getattr(seen_by_pluggy, "SVC_DELIVERS", None) == ("a.b",)  # not a hook: read through to the plugin
    hash(seen_by_pluggy)  # pluggy keeps the plugins of a subset call in a set


def test_the_fake_transport_plugin_offers_its_transport(svc_plugin_manager: PluginManager) -> None:
    fake = FakeTransport("lab")
    plugin = transport_plugin(fake)
    assert inspect.isfunction(inspect.getattr_static(plugin, "svc_transports"))
    svc_plugin_manager.register(plugin, "fake-lab")
    spec = svc_plugin_manager.transport_specs(HostConfig())["lab"]
    assert spec.factory() is fake


def test_a_plugin_with_no_hook_is_refused_with_one_line(svc_plugin_manager: PluginManager) -> None:
    with pytest.raises(PluginError) as raised:
        svc_plugin_manager.register(SimpleNamespace(svc_transports=lambda config: []), "unmarked")
    assert str(raised.value) == (
        "plugin unmarked from local 0 failed to load: unmarked: implements no svc hook "
        "(no function marked with svc_host.plugin's @hookimpl)"
    )
    assert "unmarked" not in [info.name for info in svc_plugin_manager.plugins()]


def test_hooks_only_a_getattr_proxy_answers_are_refused_on_every_pluggy() -> None:
    class Proxy:
        """Hooks reachable only through __getattr__: no pluggy version registers them."""

        def __init__(self, target: object) -> None:
            self._target = target

        def __getattr__(self, name: str) -> Any:
            return getattr(self._target, name)

    manager = PluginManager(strict=False)
    manager.register(Proxy(SimpleNamespace(svc_transports=hookimpl(lambda config: []))), "proxied")
    (info,) = manager.plugins()
    assert info.status == "failed"
    assert info.error is not None
    assert "implements no svc hook" in info.error


def test_an_entry_point_with_no_hook_is_reported_and_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    hookless = EntryPoint(name="hookless", value="json", group="svc")  # a module with no svc hook at all
    marked = EntryPoint(name="fine", value="svc_plugin_local.hooks", group="svc")
    monkeypatch.setattr(manager_module, "entry_points", lambda group: [hookless, marked])
    manager = PluginManager(strict=False)
    with caplog.at_level(logging.WARNING, logger=manager_module.__name__):
        manager.load_entry_points()
    infos = {info.name: info for info in manager.plugins()}
    assert infos["fine"].status == "ok"
    assert infos["hookless"].status == "failed"
    assert infos["hookless"].error == "entry point 'json': implements no svc hook (no function marked with " + (
        "svc_host.plugin's @hookimpl)"
    )
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [f"plugin hookless from unknown unknown failed to load: {infos['hookless'].error}"]


def test_a_strict_manager_fails_on_a_hookless_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manager_module, "entry_points", lambda group: [EntryPoint("hookless", "json", "svc")])
    with pytest.raises(PluginError, match=r"^plugin hookless from unknown unknown failed to load: .*no svc hook"):
        PluginManager(strict=True).load_entry_points()


def test_a_marked_method_of_an_unhashable_plugin_is_found(svc_plugin_manager: PluginManager) -> None:
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]  # like a dataclass with eq=True

        @hookimpl
        def svc_transports(self, config: HostConfig) -> list[TransportSpec]:
            return [TransportSpec(name="odd", factory=FakeTransport)]

    svc_plugin_manager.register(Unhashable(), "odd")
    assert list(svc_plugin_manager.transport_specs(HostConfig())) == ["odd"]
