"""``sync_files`` and ``inspect_mount`` as an agent sees them: ``svc mcp`` over stdio, the dev cluster's sshd."""

from __future__ import annotations

import json
import shlex
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from svc_host.domain.profiles import SSHProfile
from svc_host.testing.sync_contract import write_tree
from svc_plugin_ssh.options import connect_options

INSPECT_FIELDS = {
    "success", "profile", "mount", "local", "remote", "files_would_transfer", "mirror_delete_candidates",
    "mirror_delete_candidate_paths", "mirror_delete_candidate_paths_omitted", "stale_uploads_known",
    "stale_uploads", "stale_upload_paths", "stale_upload_paths_omitted", "stale_uploads_unknown_reason",
    "effective_exclude_patterns",
}  # fmt: skip
SYNC_FIELDS = {
    "success", "profile", "mount", "local", "remote", "dry_run", "delete", "files_transferred", "entries_deleted",
    "deleted_paths", "deleted_paths_omitted", "mirror_candidates_inspected",
}  # fmt: skip


@pytest.fixture
def local(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


@pytest.fixture
def remote(dev_profile: SSHProfile) -> str:
    """The mount's remote directory: a fresh ``svc-mcp-test-<uuid>/proj`` under the dev user's home."""
    return f"svc-mcp-test-{uuid.uuid4().hex[:12]}/proj"


@pytest.fixture
async def cluster(dev_profile: SSHProfile, remote: str) -> AsyncIterator[asyncssh.SSHClientConnection]:
    """A connection of the test's own to the dev cluster; removes the mount's remote directory afterwards."""
    host, options = connect_options(dev_profile)
    async with asyncssh.connect(host, **options) as conn:
        yield conn
        await conn.run(shlex.join(["rm", "-rf", "--", remote.split("/", maxsplit=1)[0]]), check=False)


@pytest.fixture
def profiles(
    write_profiles: Callable[[dict[str, Any]], None], dev_profile: SSHProfile, local: Path, remote: str
) -> None:
    """profiles.json in the server's isolated config: ``dev`` (current) with the mount ``proj``."""
    profile = dev_profile.model_dump() | {"mounts": [{"name": "proj", "local": str(local), "remote": remote}]}
    write_profiles({"current": "dev", "profiles": {"dev": profile}})


async def remote_files(conn: asyncssh.SSHClientConnection, remote: str) -> set[str]:
    found = await conn.run(shlex.join(["find", remote, "-type", "f", "-printf", r"%P\n"]), check=False)
    return {line for line in str(found.stdout).splitlines() if not line.startswith(".svc-")}


pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("profiles")]


async def test_tools_are_listed_with_required_transport(mcp_factory: Any) -> None:
    async with mcp_factory() as mcp:
        tools = {tool.name: tool for tool in await mcp("__list__")}
    sync, inspect = tools["sync_files"], tools["inspect_mount"]
    assert (sync.annotations.read_only_hint, sync.annotations.destructive_hint) == (False, True)
    assert (inspect.annotations.read_only_hint, inspect.annotations.destructive_hint) == (True, False)
    assert sync.input_schema["required"] == ["transport", "mount"]
    assert inspect.input_schema["required"] == ["transport", "mount"]
    properties = sync.input_schema["properties"]
    assert (properties["dry_run"]["default"], properties["delete"]["default"]) == (False, False)
    assert properties["max_delete"]["default"] == 100
    assert inspect.input_schema["properties"]["max_paths"]["default"] == 1000


async def test_sync_and_inspect_a_mount(
    mcp_factory: Any, local: Path, remote: str, cluster: asyncssh.SSHClientConnection
) -> None:
    write_tree(local, {"a.txt": "a", "sub/b.txt": "b"})
    async with mcp_factory() as mcp:
        before = await mcp("inspect_mount", transport="dev", mount="proj")
        assert set(before) == INSPECT_FIELDS
        assert before["success"], before
        assert (before["profile"], before["mount"], before["local"], before["remote"]) == (
            "dev", "proj", str(local), remote,
        )  # fmt: skip
        assert before["files_would_transfer"] == 2
        assert (before["stale_uploads_known"], before["stale_uploads"]) == (False, 0)
        assert before["stale_uploads_unknown_reason"] == "nothing recorded yet: no sync of this mount has completed"
        assert ".git/" in before["effective_exclude_patterns"] or ".git" in before["effective_exclude_patterns"]

        dry = await mcp("sync_files", transport="dev", mount="proj", dry_run=True)
        assert (dry["success"], dry["dry_run"], dry["files_transferred"]) == (True, True, 2), dry
        assert await remote_files(cluster, remote) == set()

        synced = await mcp("sync_files", transport="dev", mount="proj")
        assert synced == {
            "success": True, "profile": "dev", "mount": "proj", "local": str(local), "remote": remote,
            "dry_run": False, "delete": False, "files_transferred": 2, "entries_deleted": 0, "deleted_paths": [],
            "deleted_paths_omitted": False, "mirror_candidates_inspected": False,
        }  # fmt: skip
        assert await remote_files(cluster, remote) == {"a.txt", "sub/b.txt"}

        # a local deletion and a job output on the cluster: additive sync keeps both
        (local / "a.txt").unlink()
        await cluster.run(shlex.join(["sh", "-c", f"echo out > {shlex.quote(remote)}/job.out"]), check=True)
        additive = await mcp("sync_files", transport="dev", mount="proj")
        assert (additive["entries_deleted"], additive["mirror_candidates_inspected"]) == (0, False)
        assert await remote_files(cluster, remote) == {"a.txt", "sub/b.txt", "job.out"}

        report = await mcp("inspect_mount", transport="dev", mount="proj")
        assert report["mirror_delete_candidates"] == 2
        assert sorted(report["mirror_delete_candidate_paths"]) == ["a.txt", "job.out"]
        assert (report["stale_uploads_known"], report["stale_uploads"], report["stale_upload_paths"]) == (
            True, 1, ["a.txt"],
        )  # fmt: skip
        assert report["stale_uploads_unknown_reason"] == ""
        capped = await mcp("inspect_mount", transport="dev", mount="proj", max_paths=1)
        assert (capped["mirror_delete_candidates"], capped["mirror_delete_candidate_paths"]) == (2, [])
        assert capped["mirror_delete_candidate_paths_omitted"] is True
        assert (capped["stale_upload_paths"], capped["stale_upload_paths_omitted"]) == (["a.txt"], False)

        refused = await mcp("sync_files", transport="dev", mount="proj", delete=True, max_delete=1)
        assert refused["success"] is False
        assert refused["error"].startswith("mirror of mount 'proj' refused, nothing changed: 2 entries would be")
        assert "max_delete=1" in refused["error"]
        assert await remote_files(cluster, remote) == {"a.txt", "sub/b.txt", "job.out"}

        preview = await mcp("sync_files", transport="dev", mount="proj", delete=True, dry_run=True)
        assert (preview["entries_deleted"], sorted(preview["deleted_paths"])) == (2, ["a.txt", "job.out"])
        assert preview["mirror_candidates_inspected"] is True
        assert await remote_files(cluster, remote) == {"a.txt", "sub/b.txt", "job.out"}

        mirrored = await mcp("sync_files", transport="dev", mount="proj", delete=True, max_delete=2)
        assert mirrored["success"], mirrored
        assert (mirrored["entries_deleted"], sorted(mirrored["deleted_paths"])) == (2, ["a.txt", "job.out"])
        assert mirrored["deleted_paths_omitted"] is False
        assert await remote_files(cluster, remote) == {"sub/b.txt"}


async def test_max_delete_below_one_is_refused(mcp_factory: Any, local: Path) -> None:
    write_tree(local, {"a.txt": "a"})
    async with mcp_factory() as mcp:
        result = await mcp("sync_files", transport="dev", mount="proj", delete=True, max_delete=0)
    assert result["success"] is False
    assert result["error"].startswith("max_delete must be >= 1 (got 0)")


@pytest.mark.parametrize("tool", ["sync_files", "inspect_mount"])
@pytest.mark.parametrize(
    ("transport", "mount", "error"),
    [
        ("dev", "nope", "Mount 'nope' not found in profile 'dev'"),
        ("gpu", "proj", "SSH profile 'gpu' not found; known profiles: 'dev'"),
        ("", "proj", "transport is required: the SSH profile whose mount to use (see list_ssh_profiles); "
                     "there is no current-profile fallback"),
        ("local", "proj", "transport='local' (Slurm on this machine) has no mounts to sync; "
                          "pass the name of an SSH profile (see list_ssh_profiles)"),
    ],
)  # fmt: skip
async def test_spec_errors(mcp_factory: Any, tool: str, transport: str, mount: str, error: str) -> None:
    async with mcp_factory() as mcp:
        assert await mcp(tool, transport=transport, mount=mount) == {"success": False, "error": error}


@pytest.mark.parametrize("tool", ["sync_files", "inspect_mount"])
async def test_missing_transport_is_rejected_by_the_schema(svc_home: dict[str, str], tool: str) -> None:
    """transport is required in the tool's schema: the call is refused before svc runs the tool, in the
    spec's shape (not the SDK's isError text)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "svc_host", "mcp", "--root", svc_home["SVC_WORK"]],
        env=svc_home,
        cwd=svc_home["SVC_WORK"],
    )
    async with Client(params) as client:
        result = await client.call_tool(tool, {"mount": "proj"})
    assert not result.is_error
    body = {"success": False, "error": f"{tool}: missing required argument 'transport'"}
    assert result.structured_content == body
    assert [json.loads(getattr(block, "text", "")) for block in result.content] == [body]


async def test_a_first_mirror_into_files_svc_never_synced_needs_adopt(
    mcp_factory: Any, local: Path, remote: str, cluster: asyncssh.SSHClientConnection
) -> None:
    write_tree(local, {"a.txt": "a"})
    await cluster.run(shlex.join(["mkdir", "-p", remote]), check=True)
    await cluster.run(shlex.join(["touch", f"{remote}/theirs.txt"]), check=True)
    async with mcp_factory() as mcp:
        tools = {tool.name: tool for tool in await mcp("__list__")}
        assert tools["sync_files"].input_schema["properties"]["adopt"]["default"] is False
        refused = await mcp("sync_files", transport="dev", mount="proj", delete=True)
        assert refused["success"] is False
        assert "holds 1 entries ('theirs.txt')" in refused["error"]
        assert "adopt=true for sync_files" in refused["error"]
        assert await remote_files(cluster, remote) == {"theirs.txt"}

        adopted = await mcp("sync_files", transport="dev", mount="proj", delete=True, adopt=True)
        assert (adopted["success"], adopted["deleted_paths"]) == (True, ["theirs.txt"]), adopted
    assert await remote_files(cluster, remote) == {"a.txt"}


async def test_a_mount_another_machine_synced_last_needs_force_and_a_forced_dry_run_changes_nothing(
    mcp_factory: Any, local: Path, remote: str, cluster: asyncssh.SSHClientConnection
) -> None:
    write_tree(local, {"a.txt": "a"})
    foreign = {"machine_id": "f" * 32, "hostname": "laptop", "user": "ada", "claimed_at": "2025-01-02T03:04:05Z"}
    await cluster.run(shlex.join(["mkdir", "-p", remote]), check=True)
    await cluster.run(f"cat > {shlex.quote(remote + '/.svc-owner')}", input=json.dumps(foreign), check=True)
    async with mcp_factory() as mcp:
        tools = {tool.name: tool for tool in await mcp("__list__")}
        assert tools["sync_files"].input_schema["properties"]["force"]["default"] is False
        refused = await mcp("sync_files", transport="dev", mount="proj", dry_run=True)
        assert refused["success"] is False
        assert "synced from another machine: ada@laptop" in refused["error"]

        preview = await mcp("sync_files", transport="dev", mount="proj", dry_run=True, force=True)
        assert (preview["success"], preview["dry_run"], preview["files_transferred"]) == (True, True, 1), preview
        assert await remote_files(cluster, remote) == set()  # a forced dry run changes nothing

        taken = await mcp("sync_files", transport="dev", mount="proj", force=True)
        assert (taken["success"], taken["files_transferred"]) == (True, 1), taken
        assert (await mcp("sync_files", transport="dev", mount="proj"))["success"] is True  # ours now
    assert await remote_files(cluster, remote) == {"a.txt"}
