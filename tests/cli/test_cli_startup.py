"""How commands start. What a command loads decides how fast it starts: commands that never read svc's
store never import the ORM, and ``svc --version`` imports neither pydantic nor SSH (checked in a real
process, through its ``sys.modules`` when it exits). The store opened on first use is still opened by
``svc serve`` before it listens, so a bad database URL is one line."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import uuid

import pytest

from svc_host.domain.profiles import SSHProfile
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore

HEAVY = ("sqlalchemy", "sqlmodel", "svc_host.store.database", "svc_host.runtime.monitor", "pydantic", "asyncssh")

RUN_AND_REPORT = """
import atexit, json, sys
heavy = json.loads(sys.argv[1])
atexit.register(lambda: sys.stderr.write("LOADED " + json.dumps([m for m in heavy if m in sys.modules]) + "\\n"))
sys.argv = ["svc", *sys.argv[2:]]
from svc_host.cli import main
main()
"""


def svc_loading(*args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run ``svc ARGS`` and return the process and which of ``HEAVY`` it had imported when it exited."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_REPORT, json.dumps(HEAVY), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    reports = [line for line in done.stderr.splitlines() if line.startswith("LOADED ")]
    assert reports, done.stderr
    return done, json.loads(reports[-1].removeprefix("LOADED "))


def test_version_imports_neither_pydantic_nor_ssh_nor_the_orm() -> None:
    done, loaded = svc_loading("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("svc, version ")
    assert loaded == []


@pytest.mark.cluster
def test_jobs_over_ssh_lists_the_queue_without_importing_the_store(
    dev_profile: SSHProfile, dev_env: dict[str, str]
) -> None:
    ProfileStore(SvcPaths.from_env().profiles_file).create("dev", dev_profile)
    work_dir = f"svc-cli-imports-{uuid.uuid4().hex[:8]}"
    submitted = subprocess.run(
        [sys.executable, "-m", "svc_host", "submit", "-t", "dev", "-p", "debug", "--work-dir", work_dir, "sleep", "60"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    try:
        done, loaded = svc_loading("jobs", "-t", "dev", "--json")
        assert done.returncode == 0, done.stderr
        assert job_id in [job["job_id"] for job in json.loads(done.stdout)]
        assert "asyncssh" in loaded  # it did go over SSH
        assert not {"sqlalchemy", "sqlmodel", "svc_host.store.database", "svc_host.runtime.monitor"} & set(loaded)
    finally:
        ssh = ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-p", dev_env["SVC_DEV_SSH_PORT"]]
        ssh += ["-i", dev_env["SVC_DEV_SSH_KEY"], "-o", f"UserKnownHostsFile={dev_env['SVC_DEV_SSH_KNOWN_HOSTS']}"]
        ssh += [f"{dev_env['SVC_DEV_SSH_USER']}@{dev_env['SVC_DEV_SSH_HOST']}"]
        subprocess.run([*ssh, shlex.join(["scancel", job_id])], capture_output=True, timeout=120, check=False)
        subprocess.run([*ssh, shlex.join(["rm", "-rf", "--", work_dir])], capture_output=True, timeout=120, check=False)


@pytest.mark.cluster
def test_jobs_on_the_local_cluster_never_imports_the_ssh_library(dev_profile: SSHProfile) -> None:
    # an SSH profile is configured (the ssh plugin lists its transport, the rsync plugin its backend), unused here
    ProfileStore(SvcPaths.from_env().profiles_file).create("dev", dev_profile)
    done, loaded = svc_loading("jobs", "-t", "local", "--json")
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), list)
    assert "asyncssh" not in loaded


def test_serve_with_an_unusable_database_says_so_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "svc_host", "serve", "--port", "0"],
        env={**os.environ, "SVC_DATABASE_URL": "not a url"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: SVC_DATABASE_URL is not a database URL")
    assert len(done.stderr.strip().splitlines()) == 1
