"""The cluster of these tests is svc's dev cluster: its loopback sshd as the login node, account ``svcdev``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from svc_host.plugin import SSHProfile
from svc_host.testing import skip_or_fail

DEVCLUSTER = Path(__file__).resolve().parents[3] / "scripts" / "devcluster"


@pytest.fixture(scope="session")
def dev_profile() -> SSHProfile:
    """The dev cluster's login node as an SSH profile (skip, or fail under CI, when it is down)."""
    if not DEVCLUSTER.exists() or subprocess.run([DEVCLUSTER, "status"], capture_output=True, check=False).returncode:
        skip_or_fail("the dev cluster is not up (scripts/devcluster up)")
    out = subprocess.run([DEVCLUSTER, "env"], capture_output=True, text=True, check=True).stdout
    dev = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return SSHProfile(
        hostname=dev["SVC_DEV_SSH_HOST"],
        port=int(dev["SVC_DEV_SSH_PORT"]),
        username=dev["SVC_DEV_SSH_USER"],
        key_filename=dev["SVC_DEV_SSH_KEY"],
        known_hosts=dev["SVC_DEV_SSH_KNOWN_HOSTS"],
    )
