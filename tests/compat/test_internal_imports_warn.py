"""A plugin that imports svc's internal modules is told so when svc loads it: one ``DeprecationWarning`` per
internal import, naming the file, the line and the module, whether the module was imported by svc before or not
(a cache of ``sys.modules`` hides nothing). Imports of the two doors, and svc's own plugins, say nothing."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_host.plugin_core.internal_imports import internal_imports
from svc_host.plugin_core.manager import PluginManager

HOOKS = """\
from svc_host.plugin import hookimpl
from svc_host.settings.config import load_config
import svc_host.transports.base


@hookimpl
def svc_event(event):
    from svc_host.store import jobs
    from svc_host.testing import eventually
"""


@pytest.fixture
def internal_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package ``svc_inner_site`` whose hooks module imports internal modules (two already loaded by svc)."""
    package = tmp_path / "svc_inner_site"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "hooks.py").write_text(HOOKS)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield package / "hooks.py"
    for name in [name for name in sys.modules if name.startswith("svc_inner_site")]:
        del sys.modules[name]


def test_each_internal_import_of_a_plugin_is_a_warning_naming_file_line_and_module(internal_plugin: Path) -> None:
    import svc_host.settings.config  # noqa: F401 - loaded before the plugin, as in any svc process

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PluginManager().register(importlib.import_module("svc_inner_site.hooks"), "inner", distribution="svc-inner")
    messages = [str(warning.message) for warning in caught if warning.category is DeprecationWarning]
    assert messages == [
        f"{internal_plugin}:{line} imports {module}, which is internal to svc and may change in any release: "
        "import from svc_host.plugin (docs/plugins/api.md)"
        for line, module in ((2, "svc_host.settings.config"), (3, "svc_host.transports.base"), (8, "svc_host.store"))
    ]


def test_the_doors_and_svcs_own_plugins_say_nothing() -> None:
    assert internal_imports("from svc_host import hookimpl\nfrom svc_host.plugin import Event\n", "x.py") == []
    assert internal_imports("from svc_host.testing.plugin import skip_or_fail\nimport svc_host\n", "x.py") == []
    assert [str(i.module) for i in internal_imports("from svc_host import settings\n", "x.py")] == ["svc_host.settings"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from svc_host.plugin_core.manager import create_plugin_manager

        create_plugin_manager()  # every installed plugin of this repository: none imports an internal module
