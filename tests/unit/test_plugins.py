"""The plugin host: isolation of broken plugins, duplicate names, disabling, strict mode, typed access."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig, SSHProfile
from svc_host.errors import PluginError
from svc_host.host import Host
from svc_host.plugin_core.hook_calls import PluginInfo
from svc_host.plugin_core.manager import PluginManager, create_plugin_manager
from svc_host.plugin_core.records import Event, TransportSpec

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
        "duplicate transport names: 'local' from local (svc 0.2.0) and dup (svc-fake-dup 2.0). "
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


def test_unknown_transport_lists_the_choices_and_providers(svc_plugin_manager: PluginManager) -> None:
    from svc_plugin_local import hooks as local_hooks

    svc_plugin_manager.register(local_hooks, "local", distribution="svc", version="0.1.0")
    with pytest.raises(
        PluginError, match=r"unknown transport 'nope'; choose one of: local \(from local \(svc 0.1.0\)\)"
    ):
        svc_plugin_manager.transport_spec("nope", HostConfig())


def test_a_hookimpl_for_an_unknown_hook_fails_check_pending(svc_plugin_manager: PluginManager) -> None:
    typo = SimpleNamespace(svc_transport=hookimpl(lambda config: []))
    svc_plugin_manager.register(typo, "typo")
    with pytest.raises(PluginError, match="implements an unknown hook"):
        svc_plugin_manager.check_pending()


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


def test_an_observer_failure_does_not_stop_the_broadcast(svc_plugin_manager: PluginManager) -> None:
    seen: list[str] = []

    def bad(event: Event) -> None:
        raise RuntimeError("observer bug")

    svc_plugin_manager.register(SimpleNamespace(svc_event=hookimpl(bad)), "bad")
    svc_plugin_manager.register(SimpleNamespace(svc_event=hookimpl(lambda event: seen.append(event.name))), "good")
    svc_plugin_manager.emit(Event(name="job.status_changed", payload={"job_id": "1"}))
    assert seen == ["job.status_changed"]


def test_ssh_plugin_offers_one_transport_per_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_DISABLE_PLUGINS", "site")  # the example site's distribution is installed here too
    manager = create_plugin_manager(strict=True)
    config = HostConfig(profiles={"alpha": SSHProfile(hostname="a.example"), "beta": SSHProfile(hostname="b.example")})
    specs = manager.transport_specs(config)
    assert sorted(specs) == ["alpha", "beta", "local"]
    assert specs["alpha"].remote
    assert not specs["local"].remote


def test_record_names_are_validated() -> None:
    with pytest.raises(ValueError, match="transport name 'Bad Name' is invalid"):
        TransportSpec(name="Bad Name", factory=object)


# -- the manager follows pluggy ----------------------------------------------------------------------------


def test_an_implementation_may_take_fewer_arguments_than_the_spec(svc_plugin_manager: PluginManager) -> None:
    svc_plugin_manager.register(
        SimpleNamespace(svc_transports=hookimpl(lambda: [TransportSpec(name="argless", factory=object)])), "argless"
    )
    assert "argless" in svc_plugin_manager.transport_specs(HostConfig())


def test_the_calling_order_is_pluggys(svc_plugin_manager: PluginManager) -> None:
    """tryfirst, then the newest registered first, then trylast; records keep that order."""
    called: list[str] = []

    def plugin(name: str, **opts: bool) -> SimpleNamespace:
        def svc_event(event: Event) -> None:
            called.append(name)

        return SimpleNamespace(svc_event=hookimpl(**opts)(svc_event))

    svc_plugin_manager.register(plugin("last", trylast=True), "last")
    svc_plugin_manager.register(plugin("old"), "old")
    svc_plugin_manager.register(plugin("first", tryfirst=True), "first")
    svc_plugin_manager.register(plugin("new"), "new")
    svc_plugin_manager.emit(Event(name="job.status_changed", payload={}))
    assert called == ["first", "new", "old", "last"]
    assert svc_plugin_manager.providers("svc_event") == ["first", "new", "old", "last"]


def test_a_wrapper_sees_every_plugins_call(svc_plugin_manager: PluginManager) -> None:
    seen: list[list[str]] = []

    def wrap(config: HostConfig) -> Iterator[None]:
        result = yield
        seen.append([spec.name for specs in result for spec in specs])
        return result

    svc_plugin_manager.register(SimpleNamespace(svc_transports=hookimpl(wrapper=True)(wrap)), "wrapper")
    svc_plugin_manager.register(
        SimpleNamespace(svc_transports=hookimpl(lambda config: [TransportSpec(name="a", factory=object)])), "a"
    )
    svc_plugin_manager.register(
        SimpleNamespace(svc_transports=hookimpl(lambda config: [TransportSpec(name="b", factory=object)])), "b"
    )
    assert sorted(svc_plugin_manager.transport_specs(HostConfig())) == ["a", "b"]
    assert seen == [["b"], ["a"]]


def test_a_wrong_record_names_the_plugin(svc_plugin_manager: PluginManager) -> None:
    svc_plugin_manager.register(SimpleNamespace(svc_renderers=hookimpl(lambda: ["default"])), "sloppy", version="1.2")
    with pytest.raises(PluginError) as caught:
        svc_plugin_manager.renderer("default")
    assert str(caught.value) == (
        "plugin sloppy (local 1.2) failed in svc_renderers: returned str 'default', expected RendererSpec"
    )


def test_a_wrong_record_is_skipped_and_shown_when_not_strict() -> None:
    manager = PluginManager(strict=False)
    manager.load_builtins()
    manager.register(SimpleNamespace(svc_mcp_tools=hookimpl(lambda: {"x": 1})), "sloppy")
    assert "submit_job" in manager.mcp_tools()
    info = by_name(manager)["sloppy"]
    assert info.status == "failed"
    assert info.error == "plugin sloppy (local 0) failed in svc_mcp_tools: returned dict, expected a list of ToolSpec"


def test_name_tables_are_built_once(svc_plugin_manager: PluginManager) -> None:
    calls: list[int] = []

    def renderers() -> list[Any]:
        calls.append(1)
        return []

    svc_plugin_manager.register(SimpleNamespace(svc_renderers=hookimpl(renderers)), "counted")
    for _ in range(3):
        svc_plugin_manager.renderer("default")
    svc_plugin_manager.renderers()
    assert calls == [1]


async def test_a_duplicate_renderer_stops_the_server_at_start(
    svc_plugin_manager: PluginManager, svc_paths: Any
) -> None:
    from svc_host.host import Host
    from svc_host.plugin_core.records import RendererSpec
    from svc_host.settings.profiles import ProfileStore
    from svc_host.store.database import Store

    def render(definition: Any) -> Any:
        raise AssertionError("never rendered")

    svc_plugin_manager.register(
        SimpleNamespace(svc_renderers=hookimpl(lambda: [RendererSpec("default", render)])), "mine"
    )
    host = Host(
        paths=svc_paths,
        plugins=svc_plugin_manager,
        profiles=ProfileStore(svc_paths.profiles_file),
        store=Store(f"sqlite:///{svc_paths.state_dir / 'svc.db'}"),
        source="web",
        read_env=False,
    )
    try:
        with pytest.raises(
            PluginError, match=r"duplicate renderer names: 'default' from mine \(local 0\) and svc_host.rendering.hooks"
        ):
            await host.start()
    finally:
        await host.close()


def test_svc_trace_plugins_traces_hook_calls(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SVC_TRACE_PLUGINS", "1")
    manager = create_plugin_manager(strict=True, entry_points_too=False)
    manager.renderer("default")
    err = capsys.readouterr().err
    assert "svc plugins: svc_renderers() -> svc_host.rendering.hooks" in err
    assert "svc plugins: svc_renderers returned [[RendererSpec(name='default'" in err


async def test_emit_survives_observers_that_raise_and_still_reaches_the_event_hub(
    svc_plugin_manager: PluginManager, svc_test_host: Host
) -> None:
    from svc_host.runtime.events import event_hub

    seen: list[str] = []

    def bad(event: Event) -> None:
        raise RuntimeError("observer bug")

    svc_plugin_manager.register(SimpleNamespace(svc_event=hookimpl(tryfirst=True)(bad)), "bad-first")
    svc_plugin_manager.register(SimpleNamespace(svc_event=hookimpl(lambda event: seen.append(event.name))), "good")
    svc_plugin_manager.register(SimpleNamespace(svc_event=hookimpl(trylast=True)(bad)), "bad-last")
    published: list[Event] = []
    hub = event_hub()
    monkeypatched = hub.publish
    hub.publish = published.append  # type: ignore[method-assign]
    try:
        svc_test_host.emit(Event(name="job.status_changed", payload={"job_id": "1"}))
    finally:
        hub.publish = monkeypatched  # type: ignore[method-assign]
    assert seen == ["job.status_changed"]
    assert [event.name for event in published] == ["job.status_changed"]


def test_a_transport_with_mounts_must_be_remote() -> None:
    with pytest.raises(ValueError, match=r"transport 'odd': mounts=True requires remote=True"):
        TransportSpec(name="odd", factory=object, mounts=True)
