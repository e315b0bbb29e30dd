"""The site of these tests is svc's dev cluster: its loopback sshd as the login node, account ``svcdev``. Each test
is a fresh svc user (``svc_isolated_home``) whose site's admin wrote ``plugins.site`` into the system config, the
file both the in-process host (``svc_host``, on ``svc_paths``) and the ``svc`` commands the test runs read."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from svc_host.plugin import PluginHost, SvcPaths
from svc_host.testing.plugin import skip_or_fail

from svc_example_site.settings import NAME, SiteSettings

DEVCLUSTER = Path(__file__).resolve().parents[3] / "scripts" / "devcluster"


@pytest.fixture(scope="session")
def dev_site() -> SiteSettings:
    """The dev cluster as a site (skip, or fail under CI, when it is down)."""
    if not DEVCLUSTER.exists() or subprocess.run([DEVCLUSTER, "status"], capture_output=True, check=False).returncode:
        skip_or_fail("the dev cluster is not up (scripts/devcluster up)")
    out = subprocess.run([DEVCLUSTER, "env"], capture_output=True, text=True, check=True).stdout
    dev = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return SiteSettings(
        login=f"{dev['SVC_DEV_SSH_USER']}@{dev['SVC_DEV_SSH_HOST']}",
        account=dev["SVC_DEV_SSH_USER"],  # the dev cluster's accounting has an account per user
        port=int(dev["SVC_DEV_SSH_PORT"]),
        key=dev["SVC_DEV_SSH_KEY"],
        known_hosts=dev["SVC_DEV_SSH_KNOWN_HOSTS"],
    )


WriteSite = Callable[[dict[str, Any] | None], None]


@pytest.fixture
def write_site(svc_isolated_home: Path, svc_paths: SvcPaths) -> WriteSite:
    """``write_site(section)``: this test's system config now holds ``plugins.site`` = ``section`` (``None``: the
    site is not configured). The same file for ``svc_paths`` and for the commands run in ``svc_isolated_home``."""

    def write(section: dict[str, Any] | None) -> None:
        svc_paths.system_config.parent.mkdir(parents=True, exist_ok=True)
        svc_paths.system_config.write_text(json.dumps({"plugins": {NAME: section}} if section is not None else {}))

    return write


@pytest.fixture
def site(dev_site: SiteSettings, write_site: WriteSite) -> SiteSettings:
    """The dev site, configured as a site's admin would: in the system config."""
    write_site(dev_site.model_dump(exclude_defaults=True))
    return dev_site


@pytest.fixture
def svc_plugin_manager(svc_installed_plugins: object) -> object:
    """``svc_host`` and the clients around it find this plugin through its entry point, as ``svc`` does."""
    return svc_installed_plugins


@pytest.fixture
def site_host(site: SiteSettings, svc_test_host: PluginHost) -> PluginHost:
    """The in-process host of a configured site, as the plugin's tool, route and command are given it."""
    return svc_test_host
