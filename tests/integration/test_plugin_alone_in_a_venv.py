"""A third-party plugin installed alone: a fresh virtual environment holding svc and only
plugins/svc-plugin-example-site (no chat plugin, nothing of this machine's site-packages), installed by pip as
a user would (not editable), then used through the ``svc`` command it installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.testing.plugin import skip_or_fail

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PIP_CACHE = Path(os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache" / "pip")
"""The real user's pip cache, read at import: the tests' own HOME is a fresh directory."""


def test_the_example_site_alone_in_a_fresh_venv_loads_and_its_renderer_is_selectable(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "SVC_", "VIRTUAL_ENV"))}
    env["PIP_CACHE_DIR"] = str(PIP_CACHE)
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", str(ROOT), str(ROOT / "plugins" / "svc-plugin-example-site")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    if installed.returncode != 0:
        skip_or_fail(f"pip could not install svc into a fresh venv (no package index?): {installed.stderr[-500:]}")

    def svc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(venv / "bin" / "svc"), *args], capture_output=True, text=True, timeout=120, check=False, env=env
        )

    listed = svc("plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    plugins = {row["name"]: row for row in json.loads(listed.stdout)}
    assert plugins["site"]["status"] == "ok", plugins["site"]
    assert plugins["site"]["distribution"] == "svc-plugin-example-site"
    assert "chat" not in plugins  # really alone
    assert {row["status"] for row in plugins.values()} == {"ok"}
    assert "site" in svc("--help").stdout  # its CLI command
    chosen = svc("config", "set", "rendering.renderer", "site")
    assert chosen.returncode == 0, chosen.stderr
    shown = json.loads(svc("config", "show", "--json").stdout)
    assert shown["rendering"] == {"renderer": "site"}
    unset = {"login": None, "account": None, "qos": "normal", "port": 22, "key": None, "known_hosts": None}
    assert shown["plugins"] == {"site": unset}  # its settings section, with its defaults
    refused = svc("config", "set", "plugins.chat.format", "teams")
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
