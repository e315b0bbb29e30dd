"""A browser session cannot reach the API token or the user's keys through a mount (issue 26, N11).

The reviewer added a mount whose local root was svc's state directory and read ``api-token`` in the file
browser: the token outlived the logout. Mounts are now refused when their local root is, holds or lies inside
svc's state or config directory or ``~/.ssh`` (symlinks resolved), and so is a remote root in a ``.ssh``.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.host import Host

PROFILE = "gpu"
TOKEN_TEXT = "the-permanent-api-token-0123456789"


@pytest.fixture
async def server(svc_test_host: Host, svc_api_client: httpx.AsyncClient, home: Path) -> httpx.AsyncClient:
    """The API with a current profile, a token file in the state directory and keys in ``~/.ssh``."""
    svc_test_host.paths.state_dir.mkdir(parents=True, exist_ok=True)
    svc_test_host.paths.api_token_file.write_text(TOKEN_TEXT)
    svc_test_host.paths.api_token_file.chmod(0o600)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    svc_test_host.profiles.create(PROFILE, SSHProfile(hostname="login.example.org", username="ada"))
    svc_test_host.profiles.activate(PROFILE)
    await svc_test_host.reload_profiles()
    return svc_api_client


def guarded_roots(host: Host, home: Path, tmp_path: Path) -> dict[str, Path]:
    link = tmp_path / "innocent-looking"
    link.symlink_to(host.paths.state_dir)
    return {
        "state": host.paths.state_dir,
        "config": host.paths.user_config_dir,
        "ssh": home / ".ssh",
        "inside-state": host.paths.state_dir / "workflows",
        "holds-state": host.paths.state_dir.parent,
        "home": home,
        "filesystem-root": Path("/"),
        "symlink-to-state": link,
    }


async def test_a_mount_of_a_guarded_place_is_refused(
    server: httpx.AsyncClient, svc_test_host: Host, home: Path, tmp_path: Path
) -> None:
    svc_test_host.paths.workflows_dir.mkdir(parents=True, exist_ok=True)
    svc_test_host.paths.user_config_dir.mkdir(parents=True, exist_ok=True)
    for name, root in guarded_roots(svc_test_host, home, tmp_path).items():
        response = await server.post("/api/files/mounts", json={"name": name, "local": str(root), "remote": "~/p"})
        assert response.status_code == 422, (name, response.text)
        assert "state or config directory or ~/.ssh" in response.json()["detail"]
    assert (await server.get("/api/files/mounts")).json() == []


async def test_a_project_mount_is_still_accepted(server: httpx.AsyncClient, tmp_path: Path) -> None:
    project = tmp_path / "project-a"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print(1)\n")
    response = await server.post("/api/files/mounts", json={"name": "proj", "local": str(project), "remote": "~/p"})
    assert response.status_code == 200, response.text
    read = await server.get("/api/files/read", params={"mount": "proj", "path": "src/main.py"})
    assert read.json()["content"] == "print(1)\n"


async def test_the_file_browser_never_reads_the_token(server: httpx.AsyncClient, svc_test_host: Host) -> None:
    """A mount of the state directory stored before the refusal (or through the profiles API) cannot be read."""
    svc_test_host.profiles.add_mount(
        PROFILE, Mount(name="state", local=str(svc_test_host.paths.state_dir), remote="~/s")
    )
    await svc_test_host.reload_profiles()
    read = await server.get("/api/files/read", params={"mount": "state", "path": "api-token"})
    assert read.status_code == 403, read.text
    assert TOKEN_TEXT not in read.text
    browse = await server.get("/api/files/browse", params={"mount": "state"})
    assert browse.status_code == 403, browse.text
    assert "api-token" not in browse.text
    sync = await server.post("/api/files/sync", json={"mount": "state", "dry_run": True})
    assert sync.status_code == 403, sync.text
    inspect = await server.get("/api/files/inspect", params={"mount": "state"})
    assert inspect.status_code == 403, inspect.text
    assert "api-token" not in inspect.text
    mirror = await server.post("/api/files/mirror", json={"mount": "state", "dry_run": True})
    assert mirror.status_code == 403, mirror.text


@pytest.mark.parametrize("remote", ["~/.ssh", ".ssh", "~/.ssh/keys", "/home/ada/.ssh", "/root", "/root/.ssh"])
async def test_a_remote_root_among_the_keys_is_refused(server: httpx.AsyncClient, tmp_path: Path, remote: str) -> None:
    project = tmp_path / "project-b"
    project.mkdir(exist_ok=True)
    response = await server.post("/api/files/mounts", json={"name": "keys", "local": str(project), "remote": remote})
    assert response.status_code == 422, response.text
