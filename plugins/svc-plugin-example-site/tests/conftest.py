"""The site of these tests is svc's dev cluster: its loopback sshd as the login node, account ``svcdev``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from svc_host.testing.plugin import skip_or_fail

from svc_example_site.settings import SiteSettings

DEVCLUSTER = Path(__file__).resolve().parents[3] / "scripts" / "devcluster"


@pytest.fixture(scope="session")
def site_env() -> dict[str, str]:
    """``SVC_SITE_*`` settings pointing at the dev cluster (skip, or fail under CI, when it is down)."""
    if not DEVCLUSTER.exists() or subprocess.run([DEVCLUSTER, "status"], capture_output=True, check=False).returncode:
        skip_or_fail("the dev cluster is not up (scripts/devcluster up)")
    out = subprocess.run([DEVCLUSTER, "env"], capture_output=True, text=True, check=True).stdout
    dev = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return {
        "SVC_SITE_LOGIN": f"{dev['SVC_DEV_SSH_USER']}@{dev['SVC_DEV_SSH_HOST']}",
        "SVC_SITE_PORT": dev["SVC_DEV_SSH_PORT"],
        "SVC_SITE_KEY": dev["SVC_DEV_SSH_KEY"],
        "SVC_SITE_KNOWN_HOSTS": dev["SVC_DEV_SSH_KNOWN_HOSTS"],
        "SVC_SITE_ACCOUNT": dev["SVC_DEV_SSH_USER"],  # the dev cluster's accounting has an account per user
        "SVC_SITE_QOS": "normal",
    }


@pytest.fixture
def site(site_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> SiteSettings:
    """The site configured in this process's environment, as a site's users would configure it."""
    for key, value in site_env.items():
        monkeypatch.setenv(key, value)
    settings = SiteSettings.from_env()
    assert settings is not None
    return settings
