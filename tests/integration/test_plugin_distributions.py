"""Every distribution under plugins/ is installed by `make test` and loads through its entry point; each works
with every other third-party plugin disabled; a broken plugin next to them is reported and changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_SITE = ROOT / "tests" / "fixtures" / "plugins" / "site"
DISTRIBUTIONS = sorted(ROOT.glob("plugins/*/pyproject.toml"))


def entry_points(pyproject: Path) -> tuple[str, list[str]]:
    project = tomllib.loads(pyproject.read_text())["project"]
    return project["name"], sorted(project["entry-points"]["svc"])


def svc_plugins(env: dict[str, str]) -> dict[str, dict[str, object]]:
    result = subprocess.run(
        [sys.executable, "-m", "svc_host", "plugins", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_plugins_holds_distributions() -> None:
    assert {path.parent.name for path in DISTRIBUTIONS} >= {"svc-plugin-chat", "svc-plugin-example-site"}


@pytest.mark.parametrize("pyproject", DISTRIBUTIONS, ids=lambda path: path.parent.name)
def test_each_plugin_works_alone(pyproject: Path) -> None:
    name, own = entry_points(pyproject)
    others = [ep for other in DISTRIBUTIONS if other != pyproject for ep in entry_points(other)[1]]
    listed = svc_plugins({**os.environ, "SVC_DISABLE_PLUGINS": ",".join(others)})
    for entry_point in own:
        assert listed[entry_point]["distribution"] == name
        assert listed[entry_point]["status"] == "ok", listed[entry_point]
        assert listed[entry_point]["hooks"]
    for entry_point in others:
        assert listed[entry_point]["status"] == "disabled"
    assert listed["local"]["status"] == "ok"


def test_a_broken_plugin_is_isolated() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), os.environ.get("PYTHONPATH", "")]),
        "SVC_DISABLE_PLUGINS": "dup",
    }
    listed = svc_plugins(env)
    assert listed["broken"]["status"] == "failed"
    assert "some_missing_dependency" in str(listed["broken"]["error"])
    for pyproject in DISTRIBUTIONS:
        for entry_point in entry_points(pyproject)[1]:
            assert listed[entry_point]["status"] == "ok", listed[entry_point]
    assert listed["chat"]["health"] == {"ok": True, "summary": "off: no chat webhook URL set", "details": {}}
    shown = subprocess.run(
        [sys.executable, "-m", "svc_host", "config", "show", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert shown.returncode == 0, shown.stderr
