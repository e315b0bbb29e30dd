"""Issue 26, Info: what a plugin's metadata and the working directory can make svc import.

``SVC_PLUGIN_API`` was checked only after the plugin module was imported (its import-time code ran on an svc it
does not support); a range declared in the entry point itself is now checked first. Under ``python -m svc_host``,
Python puts the working directory first on ``sys.path``: a cloned repository's ``*.dist-info`` loaded as a plugin.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_host.plugin_core.manager import PluginManager, create_plugin_manager

PLUGIN = """
from pathlib import Path

Path({marker!r}).write_text("imported")

from svc_host.plugin import hookimpl


@hookimpl
def svc_event(event):
    pass
"""


def fake_distribution(site: Path, name: str, entry_point: str, marker: Path) -> None:
    """A distribution ``name`` 1.0 whose module writes ``marker`` when imported, as pip would install it."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[svc]\n{entry_point}\n")
    (site / f"{name}.py").write_text(PLUGIN.format(marker=str(marker)))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    where = tmp_path / "site"
    where.mkdir()
    monkeypatch.syspath_prepend(str(where))
    importlib.invalidate_caches()
    yield where
    for module in [module for module in sys.modules if module.startswith("svc_fake_")]:
        del sys.modules[module]


def loaded(manager: PluginManager, name: str) -> tuple[str, str | None]:
    (info,) = [info for info in manager.plugins() if info.name == name]
    return info.status, info.error


def test_an_entry_point_range_is_checked_before_the_import(site: Path, tmp_path: Path) -> None:
    marker = tmp_path / "future-imported"
    fake_distribution(site, "svc_fake_future", "future = svc_fake_future [>=9.0,<10]", marker)
    status, error = loaded(create_plugin_manager(), "future")
    assert status == "failed"
    assert "supports plugin API >=9.0,<10" in (error or "")
    assert not marker.exists(), "the plugin's module was imported before its API range was checked"


def test_an_entry_point_range_this_svc_meets_loads_the_plugin(site: Path, tmp_path: Path) -> None:
    marker = tmp_path / "current-imported"
    fake_distribution(site, "svc_fake_current", "current = svc_fake_current [>=1.0,<2]", marker)
    assert loaded(create_plugin_manager(), "current") == ("ok", None)
    assert marker.exists()


def test_python_m_svc_host_loads_no_plugin_from_the_working_directory(tmp_path: Path) -> None:
    clone = tmp_path / "cloned-repository"
    clone.mkdir()
    marker = tmp_path / "cwd-imported"
    fake_distribution(clone, "svc_fake_cwd", "from-the-clone = svc_fake_cwd", marker)
    listed = subprocess.run(
        [sys.executable, "-m", "svc_host", "plugins", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=clone,
    )
    assert listed.returncode == 0, listed.stderr
    assert "from-the-clone" not in {row["name"] for row in json.loads(listed.stdout)}
    assert not marker.exists()
