"""The plugin API's promise, checked: the public surface changes only with a new ``API_VERSION`` and a CHANGELOG
entry, every public name is documented, the door loads nothing heavy, and a plugin outside its declared API range
is refused with one line."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import svc_host.plugin as api
from svc_host import testing
from svc_host.plugin_core.manager import PluginManager

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def load_surface() -> object:
    spec = importlib.util.spec_from_file_location("plugin_api_surface", HERE / "surface.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SURFACE = load_surface()


def test_the_public_surface_is_the_recorded_one() -> None:
    now, then = SURFACE.surface(), SURFACE.recorded()["names"]  # type: ignore[attr-defined]
    changed = sorted(name for name in now.keys() | then.keys() if now.get(name) != then.get(name))
    assert changed == [], (
        f"the public plugin API changed ({', '.join(changed)}): keep the old form working with a DeprecationWarning "
        "(docs/plugins/api.md, 'Stability'), bump API_VERSION, add a CHANGELOG.md entry, then record the surface "
        "with `python tests/unit/plugin_api/surface.py --write`"
    )


def test_the_recorded_surface_is_of_this_api_version_and_in_the_changelog() -> None:
    assert SURFACE.recorded()["api_version"] == api.API_VERSION  # type: ignore[attr-defined]
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"plugin API {api.API_VERSION}" in changelog


@pytest.mark.parametrize("name", api.__all__)
def test_every_public_name_is_documented(name: str) -> None:
    assert f"`{name}`" in (REPO / "docs" / "plugins" / "api.md").read_text()


def test_the_front_door_loads_names_on_first_use() -> None:
    probe = (
        "import sys\nfrom svc_host.plugin import hookimpl, TransportSpec, SlurmTransport, CommandResult\n"
        "heavy = sorted(m for m in ('fastapi', 'mcp', 'sqlalchemy', 'sqlmodel', 'asyncssh') if m in sys.modules)\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_an_unknown_name_says_where_the_api_is_listed() -> None:
    with pytest.raises(AttributeError, match=r"docs/plugins/api\.md"):
        api.Host  # noqa: B018 - the attribute access is the test


@pytest.mark.parametrize(
    ("declared", "loads"), [(">=1.0,<2", True), (f"=={api.API_VERSION}", True), (">=2", False), ("<1", False)]
)
def test_a_plugin_outside_its_declared_api_range_is_refused_with_one_line(declared: str, loads: bool) -> None:
    manager = PluginManager()
    plugin = SimpleNamespace(SVC_PLUGIN_API=declared, svc_event=api.hookimpl(lambda event: None))
    manager.register(plugin, "ranged", distribution="svc-ranged", version="1.2")
    (info,) = [info for info in manager.plugins() if info.name == "ranged"]
    if loads:
        assert info.status == "ok", info.error
    else:
        assert info.status == "failed"
        assert info.error == f"ranged: supports plugin API {declared}, and this svc offers plugin API {api.API_VERSION}"


def test_a_range_that_is_not_one_is_refused() -> None:
    manager = PluginManager()
    manager.register(SimpleNamespace(SVC_PLUGIN_API="one or two"), "ranged")
    (info,) = [info for info in manager.plugins() if info.name == "ranged"]
    assert info.status == "failed"
    assert "is not a version range" in (info.error or "")


def test_the_snapshot_file_is_json_with_every_name() -> None:
    from svc_host.plugin_core import specs

    data = json.loads((HERE / "public_api.json").read_text())
    hooks = sorted(SURFACE.hookspecs())  # type: ignore[attr-defined]
    assert hooks == sorted(f"hookspec {name}" for name in dir(specs) if name.startswith("svc_"))
    fixtures = sorted(SURFACE.fixtures())  # type: ignore[attr-defined]
    assert sorted(data["names"]) == sorted(
        [*api.__all__, *(SURFACE.TESTING + name for name in testing.__all__), *hooks, *fixtures]  # type: ignore[attr-defined]
    )


def test_a_hookspec_change_is_a_surface_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new argument to a hook, or a hook turned ``firstresult``, fails the snapshot test until it is recorded
    under a new ``API_VERSION``."""
    from svc_host.plugin_core import specs
    from svc_host.plugin_core.identity import hookspec

    def svc_renderers(config: object) -> None: ...

    recorded = SURFACE.recorded()["names"]  # type: ignore[attr-defined]
    monkeypatch.setattr(specs, "svc_renderers", hookspec(svc_renderers))
    changed = SURFACE.surface()["hookspec svc_renderers"]  # type: ignore[attr-defined]
    assert changed["signature"] == "(config: 'object') -> 'None'"
    assert changed != recorded["hookspec svc_renderers"]
    monkeypatch.setattr(specs, "svc_event", hookspec(firstresult=True)(specs.svc_event))
    assert SURFACE.surface()["hookspec svc_event"]["options"] == {"firstresult": True}  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", testing.__all__)
def test_every_public_testing_name_loads_and_is_documented(name: str) -> None:
    assert getattr(testing, name) is not None
    assert f"`{name}`" in (REPO / "docs" / "plugins" / "api.md").read_text()


def test_the_testing_door_loads_names_on_first_use() -> None:
    probe = (
        "import sys\nfrom svc_host.testing import eventually, FakeTransport\n"
        "heavy = ('fastapi', 'mcp', 'sqlalchemy', 'sqlmodel', 'asyncssh', 'pytest')\n"
        "print(','.join(sorted(m for m in heavy if m in sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
