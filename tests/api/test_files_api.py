"""REST "Files and mounts": mounts of the server's profile, browse, read and sync, every status code the spec names.

Browse and read run against trees under ``tmp_path``; sync runs against the dev cluster's loopback sshd.
"""

from __future__ import annotations

import json
import os
import shlex
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncssh
import httpx
import pytest

import svc_plugin_local.hooks
import svc_plugin_rsync.hooks
import svc_plugin_ssh.hooks
from svc_host.api.app import create_app
from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.host import Host
from svc_host.settings.mounts import MAX_BROWSE_ENTRIES
from svc_host.testing.http import asgi_client, security_for_tests
from svc_plugin_ssh.options import connect_options

PROFILE = "gpu"


@pytest.fixture(autouse=True)
def plugins(svc_register_plugin: Callable[..., None]) -> None:
    """The ssh transport and the rsync backend, as the installed distribution offers them."""
    svc_register_plugin(svc_plugin_ssh.hooks, "ssh", distribution="svc", version="0")
    svc_register_plugin(svc_plugin_rsync.hooks, "rsync", distribution="svc", version="0")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hello')\n")
    (root / "README.md").write_text("# project\n")
    (root / "data.bin").write_bytes(b"\x00\x01binary")
    (root / "notes").mkdir()
    (root / "code").symlink_to("src")
    (root / "escape").symlink_to(tmp_path)
    (root / "passwd").symlink_to("/etc/passwd")
    return root


async def make_current(host: Host, profile: SSHProfile, *mounts: Mount) -> None:
    """Store ``profile`` as the server's current profile with ``mounts``, as the profiles API would."""
    host.profiles.create(PROFILE, profile)
    for mount in mounts:
        host.profiles.add_mount(PROFILE, mount)
    host.profiles.activate(PROFILE)
    await host.reload_profiles()


@pytest.fixture
async def server(svc_test_host: Host, project: Path, svc_api_client: httpx.AsyncClient) -> httpx.AsyncClient:
    """The API with a current profile holding the mount ``proj`` (local ``project``)."""
    mount = Mount(name="proj", local=str(project), remote="/scratch/ada/proj")
    await make_current(svc_test_host, SSHProfile(hostname="login.example.org", username="ada"), mount)
    return svc_api_client


def assert_no_local_path(response: httpx.Response, *paths: Path) -> None:
    for path in paths:
        assert str(path) not in response.text, response.text


# -- no SSH profile -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url", "body", "status"),
    [
        ("GET", "/api/files/browse?mount=proj", None, 404),
        ("GET", "/api/files/read?mount=proj&path=README.md", None, 404),
        ("POST", "/api/files/mounts", {"name": "proj", "local": "/tmp", "remote": "x"}, 503),
        ("DELETE", "/api/files/mounts/proj", None, 503),
        ("POST", "/api/files/sync", {"mount": "proj"}, 503),
    ],
)
async def test_without_a_profile(
    svc_api_client: httpx.AsyncClient, method: str, url: str, body: object, status: int
) -> None:
    response = await svc_api_client.request(method, url, json=body)
    assert response.status_code == status, response.text
    assert "no SSH profile is configured on the server" in response.json()["detail"]


async def test_mount_lists_are_empty_without_a_profile(svc_api_client: httpx.AsyncClient) -> None:
    for url in ("/api/files/mounts", "/api/files/mounts/config"):
        response = await svc_api_client.get(url)
        assert (response.status_code, response.json()) == (200, [])


# -- mounts -------------------------------------------------------------------------------------------------


async def test_mounts_never_show_local_paths_but_config_does(server: httpx.AsyncClient, project: Path) -> None:
    listed = await server.get("/api/files/mounts")
    assert listed.json() == [{"name": "proj", "remote": "/scratch/ada/proj"}]
    assert_no_local_path(listed, project)
    config = await server.get("/api/files/mounts/config")
    assert config.json() == [{"name": "proj", "local": str(project), "remote": "/scratch/ada/proj", "exclude": []}]


async def test_add_mount_persists_it_and_lists_it(
    server: httpx.AsyncClient, svc_test_host: Host, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    body = {"name": "data", "local": str(other), "remote": "data", "exclude": ["raw/", "*.ckpt"]}
    response = await server.post("/api/files/mounts", json=body)
    assert response.status_code == 200, response.text
    assert response.json() == body
    assert [mount.name for mount in svc_test_host.profiles.get(PROFILE).mounts] == ["proj", "data"]
    stored = json.loads(svc_test_host.paths.profiles_file.read_text())
    assert stored["profiles"][PROFILE]["mounts"][1]["local"] == str(other)
    assert (await server.get("/api/files/mounts")).json()[1] == {"name": "data", "remote": "data"}
    assert (await server.get("/api/files/browse", params={"mount": "data"})).json()["entries"] == []


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ({"name": "proj", "local": "{tmp}", "remote": "x"}, 409, "mount 'proj' already exists in profile 'gpu'"),
        ({"name": "x", "remote": "x"}, 422, "body.local: Field required"),
        ({"name": "bad name", "local": "{tmp}", "remote": "x"}, 422, "body.name: String should match pattern"),
        ({"name": "x", "local": "{tmp}/missing", "remote": "x"}, 422, "<LOCAL_PATH> is not an existing directory"),
        ({"name": "x", "local": "relative/dir", "remote": "x"}, 422, "<LOCAL_PATH> must be absolute"),
        ({"name": "x", "local": "{tmp}", "remote": "x", "exclude": ["a\nb"]}, 422, "contains a line break or NUL"),
        ({"name": "x", "local": "{tmp}", "remote": "x", "exclude": [" "]}, 422, "an exclude pattern is empty"),
        ({"name": "x", "local": "{tmp}", "remote": "x", "exclude": ["x" * 1025]}, 422, "longer than 1024 characters"),
        ({"name": "x", "local": "{tmp}", "remote": "x", "exclude": ["p"] * 257}, 422, "at most 256 exclude patterns"),
    ],
)
async def test_add_mount_errors(
    server: httpx.AsyncClient, svc_test_host: Host, tmp_path: Path, body: dict[str, Any], status: int, detail: str
) -> None:
    body = {
        key: value.replace("{tmp}", str(tmp_path)) if isinstance(value, str) else value for key, value in body.items()
    }
    response = await server.post("/api/files/mounts", json=body)
    assert response.status_code == status, response.text
    assert detail in response.json()["detail"]
    assert_no_local_path(response, tmp_path)
    assert [mount.name for mount in svc_test_host.profiles.get(PROFILE).mounts] == ["proj"]


async def test_the_profile_from_environment_variables_keeps_mounts(
    svc_test_host: Host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_SSH_HOSTNAME", "login.example.org")
    monkeypatch.setenv("SVC_SSH_USERNAME", "alice")
    host = Host(  # a server started with SVC_SSH_* in its environment
        paths=svc_test_host.paths,
        plugins=svc_test_host.plugins,
        profiles=svc_test_host.profiles,
        store=svc_test_host.store,
        source="web",
    )
    async with asgi_client(create_app(host, security=security_for_tests())) as svc_api_client:
        await _env_profile_keeps_mounts(host, svc_api_client, tmp_path)


async def _env_profile_keeps_mounts(host: Host, svc_api_client: httpx.AsyncClient, tmp_path: Path) -> None:
    assert (await svc_api_client.get("/api/files/mounts")).json() == []
    refused = await svc_api_client.post("/api/files/mounts", json={"name": "x", "local": "/nowhere", "remote": "r"})
    assert refused.status_code == 422
    assert host.profiles.list() == {}  # a refused mount stores nothing
    project = tmp_path / "env-project"
    project.mkdir()
    response = await svc_api_client.post("/api/files/mounts", json={"name": "x", "local": str(project), "remote": "r"})
    assert (response.status_code, response.json().get("name")) == (200, "x"), response.text
    assert (await svc_api_client.get("/api/files/mounts")).json() == [{"name": "x", "remote": "r"}]
    await host.reload_profiles()  # kept in the profiles file, and the environment still says where to connect
    assert host.transports.config.profiles["env"].hostname == "login.example.org"
    assert [mount.name for mount in host.transports.config.profiles["env"].mounts] == ["x"]
    taken = await svc_api_client.post("/api/files/mounts", json={"name": "x", "local": str(project), "remote": "r"})
    assert taken.status_code == 409
    deleted = await svc_api_client.delete("/api/files/mounts/x")
    assert (deleted.status_code, deleted.json()) == (200, {"status": "deleted", "name": "x"})
    assert (await svc_api_client.get("/api/files/mounts")).json() == []


async def test_delete_mount(server: httpx.AsyncClient, svc_test_host: Host, project: Path) -> None:
    response = await server.delete("/api/files/mounts/proj")
    assert (response.status_code, response.json()) == (200, {"status": "deleted", "name": "proj"})
    assert svc_test_host.profiles.get(PROFILE).mounts == []
    assert (await server.get("/api/files/mounts")).json() == []
    assert project.is_dir()  # local files are left alone
    missing = await server.delete("/api/files/mounts/proj")
    assert (missing.status_code, missing.json()) == (404, {"detail": "Mount 'proj' not found in profile 'gpu'"})


# -- browse -------------------------------------------------------------------------------------------------


async def test_browse_root(server: httpx.AsyncClient, project: Path, tmp_path: Path) -> None:
    response = await server.get("/api/files/browse", params={"mount": "proj"})
    assert response.status_code == 200
    assert response.json() == {
        "entries": [
            {"name": "code", "type": "symlink", "size": None, "accessible": True, "target_kind": "directory"},
            {"name": "notes", "type": "directory", "size": None},
            {"name": "src", "type": "directory", "size": None},
            {"name": "data.bin", "type": "file", "size": 8},
            {"name": "escape", "type": "symlink", "size": None, "accessible": False, "target_kind": None},
            {"name": "passwd", "type": "symlink", "size": None, "accessible": False, "target_kind": None},
            {"name": "README.md", "type": "file", "size": 10},
        ],
        "remote_prefix": "/scratch/ada/proj",
        "mount_name": "proj",
        "truncated": False,
    }
    assert_no_local_path(response, tmp_path)


async def test_browse_of_a_huge_directory_is_bounded_and_says_truncated(
    server: httpx.AsyncClient, project: Path
) -> None:
    crowded = project / "crowded"
    crowded.mkdir()
    for number in range(MAX_BROWSE_ENTRIES + 1):
        (crowded / f"f{number:05d}").touch()
    response = await server.get("/api/files/browse", params={"mount": "proj", "path": "crowded"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (len(body["entries"]), body["truncated"]) == (MAX_BROWSE_ENTRIES, True)
    names = [entry["name"] for entry in body["entries"]]
    assert names == sorted(names)


@pytest.mark.parametrize("path", ["src", "src/", "./src", "code", "notes/../src"])
async def test_browse_subdirectory_and_accessible_symlink(server: httpx.AsyncClient, path: str) -> None:
    response = await server.get("/api/files/browse", params={"mount": "proj", "path": path})
    assert response.status_code == 200, response.text
    assert response.json()["entries"] == [
        {"name": "pkg", "type": "directory", "size": None},
        {"name": "main.py", "type": "file", "size": 15},
    ]


@pytest.mark.parametrize(
    ("params", "status", "detail"),
    [
        ({"mount": "proj", "path": "README.md"}, 400, "'README.md' in mount 'proj' is not a directory"),
        ({"mount": "proj", "path": "../"}, 403, "path is outside the mount"),
        ({"mount": "proj", "path": "escape"}, 403, "path is outside the mount"),
        (
            {"mount": "proj", "path": "/etc"},
            403,
            "path must be relative to the mount root; absolute paths are not allowed",
        ),
        ({"mount": "proj", "path": "nope"}, 404, "'nope' in mount 'proj' not found"),
        ({"mount": "other"}, 404, "Mount 'other' not found in profile 'gpu'"),
    ],
)
async def test_browse_errors(
    server: httpx.AsyncClient, tmp_path: Path, params: dict[str, str], status: int, detail: str
) -> None:
    response = await server.get("/api/files/browse", params=params)
    assert (response.status_code, response.json()) == (status, {"detail": detail})
    assert_no_local_path(response, tmp_path)


async def test_browse_permission_denied_is_403(
    server: httpx.AsyncClient, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def denying_open(path: str | os.PathLike[str], flags: int, *args: Any) -> int:
        if str(path) == str(project / "notes"):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", denying_open)  # the suite also runs as root, where chmod would not stop it
    response = await server.get("/api/files/browse", params={"mount": "proj", "path": "notes"})
    assert (response.status_code, response.json()) == (403, {"detail": "permission denied: 'notes' in mount 'proj'"})


async def test_browse_without_the_mount_directory_is_404(server: httpx.AsyncClient, project: Path) -> None:
    project.rename(project.with_name("moved"))
    response = await server.get("/api/files/browse", params={"mount": "proj"})
    assert response.status_code == 404
    assert response.json() == {"detail": "the local directory of mount 'proj' does not exist on this machine"}


# -- read ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "shown"),
    [("src/main.py", "src/main.py"), ("code/main.py", "code/main.py"), ("./src//main.py", "src/main.py")],
)
async def test_read(server: httpx.AsyncClient, path: str, shown: str) -> None:
    response = await server.get("/api/files/read", params={"mount": "proj", "path": path})
    assert response.status_code == 200, response.text
    assert response.json() == {"content": "print('hello')\n", "path": shown, "mount": "proj"}


@pytest.mark.parametrize(
    ("params", "status", "detail"),
    [
        ({"mount": "proj"}, 400, "path is required: the file to read, relative to the mount root"),
        ({"mount": "proj", "path": ""}, 400, "path is required: the file to read, relative to the mount root"),
        ({"mount": "proj", "path": "src"}, 400, "'src' in mount 'proj' is not a file"),
        ({"mount": "proj", "path": "data.bin"}, 400, "'data.bin' in mount 'proj' is not a text file (binary content)"),
        ({"mount": "proj", "path": "../project/README.md"}, 403, "path is outside the mount"),
        ({"mount": "proj", "path": "passwd"}, 403, "path is outside the mount"),
        ({"mount": "proj", "path": "escape/project/README.md"}, 200, None),  # out and back in: inside
        ({"mount": "proj", "path": "missing.txt"}, 404, "'missing.txt' in mount 'proj' not found"),
        ({"mount": "other", "path": "x"}, 404, "Mount 'other' not found in profile 'gpu'"),
    ],
)
async def test_read_errors(
    server: httpx.AsyncClient, tmp_path: Path, params: dict[str, str], status: int, detail: str | None
) -> None:
    response = await server.get("/api/files/read", params=params)
    assert response.status_code == status, response.text
    if detail is not None:
        assert response.json() == {"detail": detail}
    assert_no_local_path(response, tmp_path)


async def test_read_limit_is_1_mb(server: httpx.AsyncClient, project: Path) -> None:
    (project / "exact.txt").write_bytes(b"x" * 1024 * 1024)
    (project / "big.txt").write_bytes(b"x" * (1024 * 1024 + 1))
    exact = await server.get("/api/files/read", params={"mount": "proj", "path": "exact.txt"})
    assert exact.status_code == 200
    assert len(exact.json()["content"]) == 1024 * 1024
    big = await server.get("/api/files/read", params={"mount": "proj", "path": "big.txt"})
    assert big.status_code == 413
    assert big.json() == {"detail": "'big.txt' in mount 'proj' is 1048577 bytes, over the 1048576 byte read limit"}


async def test_read_invalid_utf8_uses_replacement_characters(server: httpx.AsyncClient, project: Path) -> None:
    (project / "latin1.txt").write_bytes(b"caf\xe9\n")
    response = await server.get("/api/files/read", params={"mount": "proj", "path": "latin1.txt"})
    assert response.json()["content"] == "caf\ufffd\n"


# -- sync ---------------------------------------------------------------------------------------------------


async def test_sync_unknown_mount_is_404(server: httpx.AsyncClient) -> None:
    response = await server.post("/api/files/sync", json={"mount": "other"})
    assert (response.status_code, response.json()) == (404, {"detail": "Mount 'other' not found in profile 'gpu'"})


async def test_sync_body_needs_a_mount(server: httpx.AsyncClient) -> None:
    response = await server.post("/api/files/sync", json={})
    assert (response.status_code, response.json()) == (
        422,
        {"detail": "body.mount: Field required", "errors": [{"field": "mount", "message": "is required"}]},
    )


async def test_sync_without_rsync_is_502_without_local_paths(
    server: httpx.AsyncClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    response = await server.post("/api/files/sync", json={"mount": "proj"})
    assert response.status_code == 502
    assert response.json()["detail"].startswith("rsync is not installed on this machine")
    assert_no_local_path(response, tmp_path)


async def test_sync_of_a_vanished_local_directory_is_502_without_its_path(
    server: httpx.AsyncClient, project: Path, tmp_path: Path
) -> None:
    project.rename(project.with_name("moved"))
    response = await server.post("/api/files/sync", json={"mount": "proj", "force": True, "adopt": True})
    assert response.status_code == 502
    assert response.json()["detail"].startswith("local directory '<LOCAL_PATH>' of mount 'proj' does not exist")
    assert "remedy" not in response.json()  # no flag would let it through
    assert_no_local_path(response, tmp_path)


@pytest.fixture
async def closing(svc_test_host: Host) -> AsyncIterator[Host]:
    """``host``, closed afterwards with its sync backends' SSH connections."""
    yield svc_test_host
    await svc_test_host.close()


@pytest.fixture
async def remote_dir(dev_profile: SSHProfile) -> AsyncIterator[tuple[str, asyncssh.SSHClientConnection]]:
    """A fresh ``svc-files-test-<uuid>`` under the dev user's home (not created), removed afterwards."""
    name = f"svc-files-test-{uuid.uuid4().hex[:12]}"
    host, options = connect_options(dev_profile)
    async with asyncssh.connect(host, **options) as conn:
        yield name, conn
        await conn.run(shlex.join(["rm", "-rf", "--", name]), check=False)


@pytest.mark.cluster
async def test_sync_copies_the_mount_to_the_dev_cluster(
    closing: Host,
    svc_api_client: httpx.AsyncClient,
    dev_profile: SSHProfile,
    project: Path,
    tmp_path: Path,
    remote_dir: tuple[str, asyncssh.SSHClientConnection],
) -> None:
    name, conn = remote_dir
    await make_current(closing, dev_profile, Mount(name="proj", local=str(project), remote=f"{name}/proj"))

    response = await svc_api_client.post("/api/files/sync", json={"mount": "proj"})
    assert (response.status_code, response.json()) == (200, {"status": "synced", "mount": "proj"})
    listing = await conn.run(shlex.join(["cat", f"{name}/proj/src/main.py", f"{name}/proj/README.md"]), check=True)
    assert listing.stdout == "print('hello')\n# project\n"

    # additive: a file removed locally stays on the cluster
    (project / "README.md").unlink()
    assert (await svc_api_client.post("/api/files/sync", json={"mount": "proj"})).status_code == 200
    still = await conn.run(shlex.join(["test", "-f", f"{name}/proj/README.md"]), check=False)
    assert still.exit_status == 0


@pytest.mark.cluster
async def test_sync_failure_on_the_cluster_side_is_502(
    closing: Host,
    svc_api_client: httpx.AsyncClient,
    dev_profile: SSHProfile,
    project: Path,
    tmp_path: Path,
    remote_dir: tuple[str, asyncssh.SSHClientConnection],
) -> None:
    name, conn = remote_dir
    await conn.run(shlex.join(["mkdir", "-p", name]), check=True)
    await conn.run(shlex.join(["touch", f"{name}/proj"]), check=True)  # a file where the mount's directory goes
    await make_current(closing, dev_profile, Mount(name="proj", local=str(project), remote=f"{name}/proj"))
    response = await svc_api_client.post("/api/files/sync", json={"mount": "proj"})
    assert response.status_code == 502, response.text
    assert_no_local_path(response, tmp_path)
    assert dev_profile.key_filename not in response.text
    assert response.json()["detail"].startswith(f"cannot create remote directory '{name}/proj'")


@pytest.mark.cluster
async def test_sync_adopts_a_directory_holding_files_only_when_asked(
    closing: Host,
    svc_api_client: httpx.AsyncClient,
    dev_profile: SSHProfile,
    project: Path,
    remote_dir: tuple[str, asyncssh.SSHClientConnection],
) -> None:
    name, conn = remote_dir
    await conn.run(shlex.join(["mkdir", "-p", f"{name}/proj"]), check=True)
    await conn.run(shlex.join(["touch", f"{name}/proj/theirs.txt"]), check=True)
    await make_current(closing, dev_profile, Mount(name="proj", local=str(project), remote=f"{name}/proj"))

    async def claimed() -> bool:
        return (await conn.run(shlex.join(["test", "-f", f"{name}/proj/.svc-owner"]), check=False)).exit_status == 0

    assert (await svc_api_client.post("/api/files/sync", json={"mount": "proj"})).status_code == 200
    assert not await claimed()  # copied into someone's directory without claiming it
    invalid = await svc_api_client.post("/api/files/sync", json={"mount": "proj", "adopt": "please"})
    assert invalid.status_code == 422
    adopted = await svc_api_client.post("/api/files/sync", json={"mount": "proj", "adopt": True})
    assert (adopted.status_code, adopted.json()) == (200, {"status": "synced", "mount": "proj"})
    assert await claimed()
    kept = await conn.run(shlex.join(["test", "-f", f"{name}/proj/theirs.txt"]), check=False)
    assert kept.exit_status == 0  # the REST sync is additive: adopting deletes nothing


FOREIGN_MARKER = {"machine_id": "0" * 32, "hostname": "laptop", "user": "grace", "claimed_at": "2026-01-02T03:04:05Z"}


async def owner_of(conn: asyncssh.SSHClientConnection, directory: str) -> str | None:
    """The machine id in ``directory``'s owner marker on the cluster, or None without one."""
    found = await conn.run(shlex.join(["cat", f"{directory}/.svc-owner"]), check=False)
    return json.loads(str(found.stdout))["machine_id"] if found.exit_status == 0 else None


async def exists(conn: asyncssh.SSHClientConnection, path: str) -> bool:
    return (await conn.run(shlex.join(["test", "-e", path]), check=False)).exit_status == 0


@pytest.mark.cluster
async def test_force_takes_over_a_mount_another_machine_synced_after_a_dry_run_listing_the_takeover(
    closing: Host,
    svc_api_client: httpx.AsyncClient,
    dev_profile: SSHProfile,
    project: Path,
    tmp_path: Path,
    remote_dir: tuple[str, asyncssh.SSHClientConnection],
) -> None:
    name, conn = remote_dir
    remote = f"{name}/proj"
    await conn.run(shlex.join(["mkdir", "-p", remote]), check=True)
    await conn.run(f"cat > {shlex.quote(remote + '/.svc-owner')}", input=json.dumps(FOREIGN_MARKER), check=True)
    await conn.run(shlex.join(["touch", f"{remote}/stale.txt"]), check=True)
    await make_current(closing, dev_profile, Mount(name="proj", local=str(project), remote=remote))

    for url, body in (("/api/files/sync", {}), ("/api/files/sync", {"dry_run": True}), ("/api/files/mirror", {})):
        refused = await svc_api_client.post(url, json={"mount": "proj", **body})
        assert refused.status_code == 502, refused.text
        assert refused.json()["remedy"] == "force"
        assert "synced from another machine: grace@laptop" in refused.json()["detail"]
        assert_no_local_path(refused, tmp_path)

    preview = await svc_api_client.post("/api/files/sync", json={"mount": "proj", "dry_run": True, "force": True})
    assert preview.status_code == 200, preview.text
    report = preview.json()
    assert (report["status"], report["mount"], report["dry_run"], report["delete"]) == ("dry_run", "proj", True, False)
    assert {"README.md", "src/main.py"} <= set(report["transferred_paths"])
    assert report["files_transferred"] == len(report["transferred_paths"])
    assert "local" not in report
    mirror_preview = await svc_api_client.post("/api/files/mirror", json={"mount": "proj", "force": True})
    assert mirror_preview.json()["deleted_paths"] == ["stale.txt"]
    assert await owner_of(conn, remote) == FOREIGN_MARKER["machine_id"]  # the dry runs changed nothing
    assert not await exists(conn, f"{remote}/README.md")

    taken = await svc_api_client.post("/api/files/sync", json={"mount": "proj", "force": True})
    assert (taken.status_code, taken.json()) == (200, {"status": "synced", "mount": "proj"})
    assert await owner_of(conn, remote) not in (None, FOREIGN_MARKER["machine_id"])
    assert await exists(conn, f"{remote}/README.md")
    again = await svc_api_client.post("/api/files/sync", json={"mount": "proj", "dry_run": True})
    assert (again.status_code, again.json()["transferred_paths"]) == (200, [])  # ours now, nothing left to send


@pytest.mark.cluster
async def test_adopt_lets_a_first_mirror_into_a_directory_holding_files_delete_what_the_dry_run_listed(
    closing: Host,
    svc_api_client: httpx.AsyncClient,
    dev_profile: SSHProfile,
    project: Path,
    remote_dir: tuple[str, asyncssh.SSHClientConnection],
) -> None:
    name, conn = remote_dir
    remote = f"{name}/proj"
    await conn.run(shlex.join(["mkdir", "-p", remote]), check=True)
    await conn.run(shlex.join(["touch", f"{remote}/theirs.txt"]), check=True)
    await make_current(closing, dev_profile, Mount(name="proj", local=str(project), remote=remote))

    preview = await svc_api_client.post("/api/files/mirror", json={"mount": "proj", "dry_run": True})
    assert preview.status_code == 200, preview.text
    assert preview.json()["deleted_paths"] == ["theirs.txt"]
    refused = await svc_api_client.post("/api/files/mirror", json={"mount": "proj", "dry_run": False})
    assert refused.status_code == 502, refused.text
    assert refused.json()["remedy"] == "adopt"
    assert "'theirs.txt'" in refused.json()["detail"]
    assert await exists(conn, f"{remote}/theirs.txt")
    assert await owner_of(conn, remote) is None

    body = {"mount": "proj", "adopt": True}
    adopt_preview = await svc_api_client.post("/api/files/mirror", json={**body, "dry_run": True})
    assert adopt_preview.json()["deleted_paths"] == ["theirs.txt"]
    assert "README.md" in adopt_preview.json()["transferred_paths"]
    adopted = await svc_api_client.post("/api/files/mirror", json={**body, "dry_run": False, "max_delete": 1})
    assert adopted.status_code == 200, adopted.text
    assert (adopted.json()["entries_deleted"], adopted.json()["deleted_paths"]) == (1, ["theirs.txt"])
    assert not await exists(conn, f"{remote}/theirs.txt")
    assert await exists(conn, f"{remote}/README.md")
    assert await owner_of(conn, remote) is not None


# -- another cluster's mounts: ?transport= ------------------------------------------------------------------


async def test_transport_names_whose_mounts_and_projects(
    server: httpx.AsyncClient, svc_test_host: Host, tmp_path: Path, svc_register_plugin: Callable[..., None]
) -> None:
    """A dashboard tab on another cluster browses that profile's mounts; ``local`` has none; no parameter: the
    server's profile, as before."""
    svc_register_plugin(svc_plugin_local.hooks, "local", distribution="svc", version="0")  # offered, never run
    other = tmp_path / "other"
    other.mkdir()
    (other / "theirs.txt").write_text("lab's\n")
    svc_test_host.profiles.create("lab", SSHProfile(hostname="lab.example.org", username="ada"))
    svc_test_host.profiles.add_mount("lab", Mount(name="labproj", local=str(other), remote="/scratch/lab"))
    await svc_test_host.reload_profiles()

    assert (await server.get("/api/files/mounts")).json() == [{"name": "proj", "remote": "/scratch/ada/proj"}]
    lab = {"transport": "lab"}
    assert (await server.get("/api/files/mounts", params=lab)).json() == [{"name": "labproj", "remote": "/scratch/lab"}]
    listing = (await server.get("/api/files/browse", params={**lab, "mount": "labproj"})).json()
    assert [entry["name"] for entry in listing["entries"]] == ["theirs.txt"]
    assert (await server.get("/api/files/browse", params={**lab, "mount": "proj"})).status_code == 404
    projects = (await server.get("/api/config/projects", params=lab)).json()
    assert [entry["mount_name"] for entry in projects] == ["labproj"]

    local = {"transport": "local"}
    assert (await server.get("/api/files/mounts", params=local)).json() == []
    assert (await server.get("/api/config/projects", params=local)).json() == []
    refused = await server.post("/api/files/sync", params=local, json={"mount": "proj"})
    assert refused.status_code == 503
    assert "'local' is not an SSH profile" in refused.json()["detail"]
    assert (await server.get("/api/config/projects/proj", params=local)).status_code == 400

    unknown = await server.get("/api/files/mounts", params={"transport": "nowhere"})
    assert unknown.status_code == 404
    assert "choose one of" in unknown.json()["detail"]
