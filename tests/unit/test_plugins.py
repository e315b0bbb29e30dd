"""The plugin host: isolation of broken plugins, duplicate names, disabling, strict mode, typed access."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig, SSHProfile
from svc_host.errors import PluginError
from svc_host.plugin_types import Event, TransportSpec
from svc_host.plugins import PluginInfo, PluginManager, create_plugin_manager

FAKE_SITE = Path(__file__).parent.parent / "fixtures" / "plugins" / "site"


@pytest.fixture
def fake_site(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Make the fake distributions visible to importlib.metadata, as if pip-installed."""
    monkeypatch.syspath_prepend(str(FAKE_SITE))
    importlib.invalidate_caches()
    yield FAKE_SITE
    for name in [m for m in sys.modules if m.startswith("svc_fake_")]:
        del sys.modules[name]


def by_name(manager: PluginManager) -> dict[str, PluginInfo]:
    return {info.name: info for info in manager.plugins()}


def test_builtin_plugins_and_entry_points_are_listed() -> None:
    manager = create_plugin_manager()
    infos = by_name(manager)
    for name in ("local", "ssh", "rsync"):
        assert infos[name].status == "ok", infos[name]
        assert infos[name].distribution == "svc"
    assert "svc_transports" in infos["local"].hooks
    assert "svc_renderers" in infos["svc_host.rendering.hooks"].hooks


def test_broken_plugin_is_reported_and_the_rest_keeps_working(fake_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_DISABLE_PLUGINS", "dup")
    manager = create_plugin_manager()
    broken = by_name(manager)["broken"]
    assert broken.status == "failed"
    assert broken.distribution == "svc-fake-broken"
    assert broken.version == "1.0"
    assert broken.error == (
        "entry point 'svc_fake_broken.hooks': ImportError: No module named 'some_missing_dependency'"
    )
    assert "local" in manager.transport_specs(HostConfig())
    assert manager.renderer("default").name == "default"


def test_strict_mode_makes_a_broken_plugin_fatal(fake_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_DISABLE_PLUGINS", "dup")
    with pytest.raises(PluginError, match=r"plugin broken from svc-fake-broken 1.0 failed to load"):
        create_plugin_manager(strict=True)


def test_duplicate_transport_names_every_provider(fake_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_DISABLE_PLUGINS", "broken")
    manager = create_plugin_manager()
    with pytest.raises(PluginError) as caught:
        manager.transport_specs(HostConfig())
    assert str(caught.value) == (
        "duplicate transport names: 'local' from local (svc 0.1.0) and dup (svc-fake-dup 2.0). "
        "Disable one with SVC_DISABLE_PLUGINS."
    )


def test_disabled_plugins_are_shown_and_not_loaded(fake_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_DISABLE_PLUGINS", "dup, broken")
    manager = create_plugin_manager(strict=True)
    infos = by_name(manager)
    assert infos["dup"].status == "disabled"
    assert infos["broken"].status == "disabled"
    assert "svc_fake_dup" not in sys.modules
    assert manager.transport_specs(HostConfig())["local"].description == "Slurm on this machine"


def test_unknown_transport_lists_the_choices_and_providers(plugin_manager: PluginManager) -> None:
    from svc_plugin_local import hooks as local_hooks

    plugin_manager.register(local_hooks, "local", distribution="svc", version="0.1.0")
    with pytest.raises(
        PluginError, match=r"unknown transport 'nope'; choose one of: local \(from local \(svc 0.1.0\)\)"
    ):
        plugin_manager.transport_spec("nope", HostConfig())


def test_a_hookimpl_for_an_unknown_hook_fails_check_pending(plugin_manager: PluginManager) -> None:
    typo = SimpleNamespace(svc_transport=hookimpl(lambda config: []))
    plugin_manager.register(typo, "typo")
    with pytest.raises(PluginError, match="implements an unknown hook"):
        plugin_manager.check_pending()


def test_a_plugin_failing_inside_a_hook_does_not_hide_the_others() -> None:
    manager = PluginManager(strict=False)
    manager.load_builtins()

    def explode(config: HostConfig) -> list[TransportSpec]:
        raise RuntimeError("bug in plugin")

    manager.register(SimpleNamespace(svc_transports=hookimpl(explode)), "buggy")
    manager.register(
        SimpleNamespace(svc_transports=hookimpl(lambda config: [TransportSpec(name="ok", factory=object)])), "fine"
    )
    assert list(manager.transport_specs(HostConfig())) == ["ok"]


def test_an_observer_failure_does_not_stop_the_broadcast(plugin_manager: PluginManager) -> None:
    seen: list[str] = []

    def bad(event: Event) -> None:
        raise RuntimeError("observer bug")

    plugin_manager.register(SimpleNamespace(svc_event=hookimpl(bad)), "bad")
    plugin_manager.register(SimpleNamespace(svc_event=hookimpl(lambda event: seen.append(event.name))), "good")
    plugin_manager.emit(Event(name="job.status_changed", payload={"job_id": "1"}))
    assert seen == ["job.status_changed"]


def test_ssh_plugin_offers_one_transport_per_profile() -> None:
    manager = create_plugin_manager(strict=True)
    config = HostConfig(profiles={"alpha": SSHProfile(hostname="a.example"), "beta": SSHProfile(hostname="b.example")})
    specs = manager.transport_specs(config)
    assert sorted(specs) == ["alpha", "beta", "local"]
    assert specs["alpha"].remote
    assert not specs["local"].remote


def test_record_names_are_validated() -> None:
    with pytest.raises(ValueError, match="transport name 'Bad Name' is invalid"):
        TransportSpec(name="Bad Name", factory=object)
