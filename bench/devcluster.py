"""The dev cluster (``scripts/devcluster``) as the SSH benches reach it: its non-root user on the loopback sshd."""

from __future__ import annotations

import subprocess
from pathlib import Path

from svc_host.domain.profiles import SSHProfile

ROOT = Path(__file__).resolve().parent.parent


def dev_profile() -> SSHProfile:
    """The profile ``scripts/devcluster env`` describes (the cluster must be up)."""
    out = subprocess.run([ROOT / "scripts" / "devcluster", "env"], capture_output=True, text=True, check=True).stdout
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return SSHProfile(
        hostname=env["SVC_DEV_SSH_HOST"],
        port=int(env["SVC_DEV_SSH_PORT"]),
        username=env["SVC_DEV_SSH_USER"],
        key_filename=env["SVC_DEV_SSH_KEY"],
        known_hosts=env["SVC_DEV_SSH_KNOWN_HOSTS"],
    )
