"""The plugin API range in an entry point (issue 29): a form setuptools accepts in ``pyproject.toml``, read from the
installed metadata, so that svc refuses a plugin written for another API without importing it.

The first form svc documented (``pkg.hooks [>=1.0,<2]``) is refused by setuptools' pyproject validation (extras
must be PEP 508 identifiers, after a ``:attr``); ``pkg:hooks [svc-api-1.2]`` is what every backend writes. The
proof builds the metadata with the real setuptools, the way pip reads it.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_host.plugin import API_VERSION
from svc_host.plugin_core.api_range import entry_point_range
from svc_host.plugin_core.manager import PluginManager, create_plugin_manager


@pytest.mark.parametrize(
    ("value", "on_1_2", "on_2_0"),
    [
        ("svc_site:hooks [svc-api-1.2]", True, False),
        ("svc_site:hooks [svc-api-1]", True, False),
        ("svc_site:hooks [svc-api-1.3]", False, False),
        ("svc_site:hooks [svc-api-2.0]", False, True),
        ("svc_site:hooks [svc-api-1.1, svc-api-2.0]", True, True),
        ("svc_site:hooks [SVC-API-1.0]", True, False),
        ("svc_site:hooks [other-flag, svc-api-1.0]", True, False),
        ("svc_site.hooks [>=1.0,<2]", True, False),
        ("svc_site.hooks [>=2]", False, True),
    ],
)
def test_a_declared_range_admits_the_versions_it_names(value: str, on_1_2: bool, on_2_0: bool) -> None:
    declared = entry_point_range(value)
    assert declared is not None
    assert (declared.admits("1.2.0"), declared.admits("2.0.0")) == (on_1_2, on_2_0)


@pytest.mark.parametrize("value", ["svc_site.hooks", "svc_site:hooks", "svc_site:hooks [other-flag]", "x [ ]"])
def test_an_entry_point_without_an_svc_range_declares_none(value: str) -> None:
    assert entry_point_range(value) is None


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("svc_site:hooks [svc-api-one]", "'svc-api-one' is not a plugin API version (write e.g. svc-api-1.2"),
        ("svc_site:hooks [svc-api-1.2.3]", "'svc-api-1.2.3' is not a plugin API version"),
        ("svc_site.hooks [>=one]", "'>=one' is not a version range (write e.g. [svc-api-1.2])"),
    ],
)
def test_an_unreadable_range_says_what_to_write(value: str, said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        entry_point_range(value)


def test_a_refusal_names_the_range_as_written_and_as_pep_440() -> None:
    declared = entry_point_range("svc_site:hooks [svc-api-2.1, svc-api-3]")
    assert declared is not None
    assert declared.describe() == ">=2.1,<3 or >=3.0,<4 (svc-api-2.1, svc-api-3)"


PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "svc-meta-fixture"
version = "1.0"

[project.entry-points.svc]
future = "svc_meta_future:hooks [svc-api-9.0]"
current = "svc_meta_current:hooks [svc-api-1.2]"

[tool.setuptools]
packages = ["svc_meta_future", "svc_meta_current"]
"""

HOOKS = """
from pathlib import Path

Path({marker!r}).write_text("imported")

from svc_host.plugin import hookimpl


@hookimpl
def svc_event(event):
    pass
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution whose metadata setuptools wrote from PYPROJECT, on ``sys.path`` as an installed one is; each
    package writes ``<tmp>/<package>-imported`` when imported."""
    project, site = tmp_path / "project", tmp_path / "site"
    site.mkdir()
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT)
    for package in ("svc_meta_future", "svc_meta_current"):
        for where in (project, site):
            (where / package).mkdir()
            (where / package / "__init__.py").write_text(f"from {package} import hooks as hooks\n")
            (where / package / "hooks.py").write_text(HOOKS.format(marker=str(tmp_path / f"{package}-imported")))
    built = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "egg_info", "--egg-base", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, f"setuptools refused the entry points:\n{built.stdout}\n{built.stderr}"
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield tmp_path
    for module in [module for module in sys.modules if module.startswith("svc_meta_")]:
        del sys.modules[module]


def status(manager: PluginManager, name: str) -> tuple[str, str | None]:
    (info,) = [info for info in manager.plugins() if info.name == name]
    return info.status, info.error


def test_setuptools_metadata_refuses_an_out_of_range_plugin_unimported_and_loads_one_in_range(
    installed: Path,
) -> None:
    manager = create_plugin_manager()
    assert status(manager, "future") == (
        "failed",
        "entry point 'svc_meta_future:hooks [svc-api-9.0]': supports plugin API >=9.0,<10 (svc-api-9.0), and this "
        f"svc offers plugin API {API_VERSION}",
    )
    assert not (installed / "svc_meta_future-imported").exists(), "the refused plugin's module was imported"
    assert status(manager, "current") == ("ok", None)
    assert (installed / "svc_meta_current-imported").exists()
    assert "current" in manager.providers("svc_event")
