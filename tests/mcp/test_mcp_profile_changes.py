"""A running ``svc mcp`` sees profiles and mounts the CLI adds afterwards, with their sync excludes.

Real parts only: ``svc mcp`` over stdio, the ``svc`` CLI as a separate process, rsync to the dev cluster's sshd.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from svc_host.domain.profiles import SSHProfile
from svc_host.testing.sync_contract import write_tree
from svc_plugin_ssh.options import connect_options

pytestmark = pytest.mark.cluster


@pytest.fixture
def remote() -> str:
    return f"svc-mcp-test-{uuid.uuid4().hex[:12]}/proj"


@pytest.fixture
async def cluster(dev_profile: SSHProfile, remote: str) -> AsyncIterator[asyncssh.SSHClientConnection]:
    host, options = connect_options(dev_profile)
    async with asyncssh.connect(host, **options) as conn:
        yield conn
        await conn.run(shlex.join(["rm", "-rf", "--", remote.split("/", maxsplit=1)[0]]), check=False)


def svc(svc_home: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The ``svc`` CLI as another process, in the same isolated home as the server."""
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args],
        env=svc_home,
        cwd=svc_home["SVC_WORK"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def add_profile(svc_home: dict[str, str], name: str, profile: SSHProfile) -> None:
    added = svc(
        svc_home, "profile", "add", name, "--hostname", profile.hostname, "--username", profile.username,
        "--key", profile.key_filename, "--port", str(profile.port), "--known-hosts", profile.known_hosts or "",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr


async def remote_entries(conn: asyncssh.SSHClientConnection, remote: str) -> set[str]:
    found = await conn.run(shlex.join(["find", remote, "-mindepth", "1", "-printf", r"%P\n"]), check=False)
    return {line for line in str(found.stdout).splitlines() if not line.startswith(".svc-")}


async def test_a_profile_and_mount_added_by_the_cli_are_used_at_once_with_their_excludes(
    mcp_factory: Any,
    svc_home: dict[str, str],
    dev_profile: SSHProfile,
    tmp_path: Path,
    remote: str,
    cluster: asyncssh.SSHClientConnection,
) -> None:
    local = tmp_path / "project"
    write_tree(local, {"train.py": "print(1)", "data/big.bin": "x" * 1000, "ckpt/epoch1.pt": "w"})
    async with mcp_factory() as mcp:
        assert (await mcp("list_ssh_profiles"))["count"] == 0
        unknown = await mcp("sync_files", transport="hpc", mount="proj")
        assert unknown == {"success": False, "error": "SSH profile 'hpc' not found; known profiles: none"}

        add_profile(svc_home, "hpc", dev_profile)
        mounted = svc(svc_home, "profile", "mount", "add", "hpc", "proj", str(local), remote, "--exclude", "data/")
        assert mounted.returncode == 0, mounted.stderr

        listed = await mcp("list_ssh_profiles")
        assert listed["profiles"][0]["mounts"][0]["exclude"] == ["data/"]
        synced = await mcp("sync_files", transport="hpc", mount="proj")
        assert synced["success"], synced
        assert synced["files_transferred"] == 2
        assert await remote_entries(cluster, remote) == {"train.py", "ckpt", "ckpt/epoch1.pt"}

        # the project file, once trusted, adds its own pattern: inspect shows it and says the recorded filter changed
        (local / ".svc.json").write_text(json.dumps({"exclude": ["ckpt/"]}))
        trusted = svc(svc_home, "config", "trust", str(local))
        assert trusted.returncode == 0, trusted.stderr
        report = await mcp("inspect_mount", transport="hpc", mount="proj")
        assert report["success"], report
        assert report["effective_exclude_patterns"][-2:] == ["data/", "ckpt/"]
        assert (report["stale_uploads_known"], report["stale_uploads"]) == (False, 0)
        assert report["stale_uploads_unknown_reason"].startswith("the exclude filter changed since the upload record")

        write_tree(local, {"ckpt/epoch2.pt": "w", "data/more.bin": "y"})
        assert (await mcp("sync_files", transport="hpc", mount="proj"))["files_transferred"] == 1  # .svc.json
        assert await remote_entries(cluster, remote) == {"train.py", ".svc.json", "ckpt", "ckpt/epoch1.pt"}
        again = await mcp("inspect_mount", transport="hpc", mount="proj")
        assert (again["stale_uploads_known"], again["stale_uploads_unknown_reason"]) == (True, "")

        # the CLI clears the mount's patterns: the running server syncs data/ now
        cleared = svc(svc_home, "profile", "mount", "exclude", "hpc", "proj")
        assert cleared.returncode == 0, cleared.stderr
        assert cleared.stdout.strip() == "mount 'proj' of profile 'hpc' excludes: none"
        assert (await mcp("sync_files", transport="hpc", mount="proj"))["files_transferred"] == 2
        assert {"data/big.bin", "data/more.bin"} <= await remote_entries(cluster, remote)


async def test_a_changed_connection_target_reconnects(
    mcp_factory: Any, svc_home: dict[str, str], dev_profile: SSHProfile
) -> None:
    """The profile's port changes under a running server: its kept connection is dropped, the new target used."""
    add_profile(svc_home, "hpc", dev_profile)
    async with mcp_factory() as mcp:
        assert (await mcp("list_jobs", transport="hpc"))["success"]
        profiles = Path(svc_home["XDG_CONFIG_HOME"]) / "svc" / "profiles.json"
        content = json.loads(profiles.read_text())
        content["profiles"]["hpc"]["port"] = 1  # nothing listens there
        profiles.write_text(json.dumps(content))
        moved = await mcp("list_jobs", transport="hpc")
        assert moved["success"] is False
        assert moved["error"].startswith(f"cannot connect to {dev_profile.username}@{dev_profile.hostname}:1 ")

        content["profiles"]["hpc"]["port"] = dev_profile.port
        profiles.write_text(json.dumps(content))
        assert (await mcp("list_jobs", transport="hpc"))["success"]


@pytest.mark.parametrize(
    ("patterns", "error"),
    [
        (["a\nb"], "contains a line break or NUL"),
        (["x" * 1025], "longer than 1024 characters"),
        ([" "], "an exclude pattern is empty"),
    ],
)
def test_cli_refuses_bad_patterns_and_changes_nothing(
    svc_home: dict[str, str], dev_profile: SSHProfile, tmp_path: Path, patterns: list[str], error: str
) -> None:
    add_profile(svc_home, "hpc", dev_profile)
    local = tmp_path / "project"
    local.mkdir()
    profiles = Path(svc_home["XDG_CONFIG_HOME"]) / "svc" / "profiles.json"
    before = profiles.read_text()
    excludes = [arg for pattern in patterns for arg in ("--exclude", pattern)]
    refused = svc(svc_home, "profile", "mount", "add", "hpc", "proj", str(local), "r/proj", *excludes)
    assert refused.returncode != 0
    assert error in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "Traceback" not in refused.stderr
    assert profiles.read_text() == before
