"""``/api/config/ssh/profiles``: create, update, delete, activate, mounts; every code the spec names."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from svc_host.api.app import create_app
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.settings.paths import SvcPaths
from svc_host.testing.http import asgi_client, security_for_tests

GPU = {
    "name": "gpu",
    "hostname": "login.example.org",
    "username": "alice",
    "key_filename": "~/.ssh/id_ed25519",
    "port": 2222,
    "description": "A100 cluster",
    "ssh_host": None,
    "proxy_jump": "alice@bastion.example.org",
}


@pytest.fixture
async def host() -> AsyncIterator[Host]:
    host = Host.create("web", paths=SvcPaths.from_env(), plugins=create_plugin_manager(strict=True))
    yield host
    await host.close()


@pytest.fixture
async def http(host: Host) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(host, security=security_for_tests())) as client:
        yield client


@pytest.fixture
def project(home: Path) -> Path:
    directory = home / "code" / "proj"
    directory.mkdir(parents=True)
    return directory


async def test_no_profiles(http: httpx.AsyncClient) -> None:
    response = await http.get("/api/config/ssh/profiles")
    assert response.status_code == 200
    assert response.json() == {"current": "", "profiles": {}}


async def test_create_returns_the_profile_and_persists_it(http: httpx.AsyncClient, host: Host) -> None:
    response = await http.post("/api/config/ssh/profiles", json=GPU)

    assert response.status_code == 200
    created = response.json()
    expected = {k: v for k, v in GPU.items() if k != "name"}
    assert {k: created[k] for k in expected} == expected
    assert created["mounts"] == []
    assert created["env_vars"] == {}
    listed = (await http.get("/api/config/ssh/profiles")).json()
    assert listed == {"current": "", "profiles": {"gpu": created}}
    assert stat.S_IMODE(host.paths.profiles_file.stat().st_mode) == 0o600


async def test_create_conflict_and_validation(http: httpx.AsyncClient) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)

    again = await http.post("/api/config/ssh/profiles", json={**GPU, "hostname": "other"})
    assert again.status_code == 409
    assert again.json() == {"detail": "SSH profile 'gpu' already exists; update it or choose another name"}

    for body, fragment in [
        ({"hostname": "h"}, "body.name: Field required"),
        ({"name": "local", "hostname": "h"}, "reserved for the local scheduler"),
        ({"name": "GPU2", "hostname": "h"}, "invalid profile name 'GPU2' (use lowercase)"),
        ({"name": "cpu"}, "needs a hostname"),
        ({"name": "cpu", "hostname": "h", "port": 0}, "body.port: Input should be greater than or equal to 1"),
        ({"name": "cpu", "hostname": "h", "colour": "red"}, "body.colour: Extra inputs are not permitted"),
    ]:
        response = await http.post("/api/config/ssh/profiles", json=body)
        assert response.status_code == 422, body
        assert fragment in response.json()["detail"]
    assert set((await http.get("/api/config/ssh/profiles")).json()["profiles"]) == {"gpu"}


async def test_update_applies_listed_fields(http: httpx.AsyncClient) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)

    response = await http.put(
        "/api/config/ssh/profiles/gpu",
        json={"hostname": "new.example.org", "port": 22, "env_vars": {"A": "1"}, "mounts": [{"x": 1}]},
    )

    assert response.status_code == 200
    assert response.json()["hostname"] == "new.example.org"
    assert response.json()["port"] == 22
    assert response.json()["env_vars"] == {"A": "<redacted>"}
    assert response.json()["mounts"] == []
    assert response.json()["username"] == "alice"

    missing = await http.put("/api/config/ssh/profiles/nope", json={"port": 22})
    assert missing.status_code == 404
    assert missing.json() == {"detail": "SSH profile 'nope' not found; known profiles: 'gpu'"}

    invalid = await http.put("/api/config/ssh/profiles/gpu", json={"port": "ssh"})
    assert invalid.status_code == 422
    assert "port: Input should be a valid integer" in invalid.json()["detail"]


async def test_a_proxy_jump_ssh_could_read_as_an_option_is_refused_and_nothing_changes(http: httpx.AsyncClient) -> None:
    hostile = {**GPU, "name": "evil", "proxy_jump": "-oProxyCommand=touch /tmp/pwned"}
    created = await http.post("/api/config/ssh/profiles", json=hostile)
    assert created.status_code == 422
    assert "proxy_jump '-oProxyCommand=touch /tmp/pwned' is invalid" in created.json()["detail"]
    await http.post("/api/config/ssh/profiles", json=GPU)
    updated = await http.put("/api/config/ssh/profiles/gpu", json={"proxy_jump": "bastion;id"})
    assert updated.status_code == 422
    profiles = (await http.get("/api/config/ssh/profiles")).json()["profiles"]
    assert sorted(profiles) == ["gpu"]
    assert profiles["gpu"]["proxy_jump"] == GPU["proxy_jump"]


async def test_activate_makes_it_current_and_the_server_transport_follows(http: httpx.AsyncClient, host: Host) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)
    assert host.server_transport_name() == "local"

    response = await http.post("/api/config/ssh/profiles/gpu/activate")

    assert response.status_code == 200
    assert response.json() == {"ok": True}
    assert (await http.get("/api/config/ssh/profiles")).json()["current"] == "gpu"
    assert host.server_transport_name() == "gpu"
    assert "gpu" in host.transports.config.profiles

    missing = await http.post("/api/config/ssh/profiles/nope/activate")
    assert missing.status_code == 404


async def test_delete_removes_profile_and_mounts(http: httpx.AsyncClient, host: Host, project: Path) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)
    await http.post("/api/config/ssh/profiles/gpu/mounts", json={"name": "code", "local": str(project), "remote": "/r"})
    await http.post("/api/config/ssh/profiles/gpu/activate")

    response = await http.delete("/api/config/ssh/profiles/gpu")

    assert response.status_code == 200
    assert response.json() == {"ok": True}
    assert (await http.get("/api/config/ssh/profiles")).json() == {"current": "", "profiles": {}}
    assert host.server_transport_name() == "local"
    assert json.loads(host.paths.profiles_file.read_text()) == {"current": None, "profiles": {}}
    assert (await http.delete("/api/config/ssh/profiles/gpu")).status_code == 404


async def test_mounts_add_and_remove(http: httpx.AsyncClient, home: Path, project: Path) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)

    body = {"name": "code", "local": "~/code/proj", "remote": "/scratch/code", "exclude": ["data/", "*.ckpt"]}
    added = await http.post("/api/config/ssh/profiles/gpu/mounts", json=body)

    assert added.status_code == 200
    assert added.json() == {**body, "local": str(project.resolve())}
    profile = (await http.get("/api/config/ssh/profiles")).json()["profiles"]["gpu"]
    assert profile["mounts"] == [added.json()]

    removed = await http.delete("/api/config/ssh/profiles/gpu/mounts/code")
    assert removed.status_code == 200
    assert removed.json() == {"ok": True}
    assert (await http.get("/api/config/ssh/profiles")).json()["profiles"]["gpu"]["mounts"] == []


async def test_mount_errors(http: httpx.AsyncClient, home: Path, project: Path) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)
    mount = {"name": "code", "local": str(project), "remote": "/r"}

    bad_pattern = await http.post("/api/config/ssh/profiles/gpu/mounts", json={**mount, "exclude": ["a\nb"]})
    assert bad_pattern.status_code == 422
    assert "exclude pattern 'a\\nb' contains a line break or NUL" in bad_pattern.json()["detail"]
    assert (await http.get("/api/config/ssh/profiles")).json()["profiles"]["gpu"]["mounts"] == []

    no_profile = await http.post("/api/config/ssh/profiles/nope/mounts", json=mount)
    assert no_profile.status_code == 404
    assert "SSH profile 'nope' not found" in no_profile.json()["detail"]

    for local, fragment in [
        (str(home / "missing"), "is not an existing directory"),
        ("/", "is the filesystem root"),
        (str(home), "is (or contains) the home directory"),
    ]:
        response = await http.post("/api/config/ssh/profiles/gpu/mounts", json={**mount, "local": local})
        assert response.status_code == 422, local
        assert fragment in response.json()["detail"]
    missing_field = await http.post("/api/config/ssh/profiles/gpu/mounts", json={"name": "code", "local": "/tmp"})
    assert missing_field.status_code == 422
    assert missing_field.json() == {
        "detail": "body.remote: Field required",
        "errors": [{"field": "remote", "message": "is required"}],
    }

    assert (await http.post("/api/config/ssh/profiles/gpu/mounts", json=mount)).status_code == 200
    assert (await http.post("/api/config/ssh/profiles/gpu/mounts", json=mount)).status_code == 409

    unknown_mount = await http.delete("/api/config/ssh/profiles/gpu/mounts/data")
    assert unknown_mount.status_code == 404
    assert unknown_mount.json() == {"detail": "mount 'data' not found in profile 'gpu'; it has 'code'"}
    assert (await http.delete("/api/config/ssh/profiles/nope/mounts/code")).status_code == 404


async def test_environment_profile_is_what_the_server_sees(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)
    await http.post("/api/config/ssh/profiles", json={"name": "cpu", "hostname": "cpu.example.org"})
    await http.post("/api/config/ssh/profiles/gpu/activate")

    monkeypatch.setenv("SVC_SSH_PROFILE", "cpu")
    assert (await http.get("/api/config/ssh/profiles")).json()["current"] == "cpu"

    monkeypatch.delenv("SVC_SSH_PROFILE")
    monkeypatch.setenv("SVC_SSH_HOSTNAME", "direct.example.org")
    monkeypatch.setenv("SVC_SSH_USERNAME", "bob")
    body = (await http.get("/api/config/ssh/profiles")).json()
    assert body["current"] == "env"
    assert body["profiles"]["env"]["hostname"] == "direct.example.org"
    assert body["profiles"]["env"]["port"] == 22


async def test_accept_unknown_host_is_refused_by_create_and_update_alike(http: httpx.AsyncClient) -> None:
    created = await http.post("/api/config/ssh/profiles", json={**GPU, "accept_unknown_host": True})
    assert created.status_code == 422
    assert (await http.get("/api/config/ssh/profiles")).json()["profiles"] == {}

    await http.post("/api/config/ssh/profiles", json=GPU)
    updated = await http.put(
        "/api/config/ssh/profiles/gpu", json={"hostname": "x.example.org", "accept_unknown_host": True}
    )
    assert updated.status_code == 422
    assert updated.json() == created.json()
    assert "accept_unknown_host cannot be set through the API" in updated.json()["detail"]
    stored = (await http.get("/api/config/ssh/profiles")).json()["profiles"]["gpu"]
    assert (stored["hostname"], stored["accept_unknown_host"]) == ("login.example.org", False)

    explicit_false = await http.put("/api/config/ssh/profiles/gpu", json={"accept_unknown_host": False, "port": 22})
    assert explicit_false.status_code == 200


async def test_hostile_env_var_keys_and_mount_remotes_are_422_and_change_nothing(
    http: httpx.AsyncClient, project: Path
) -> None:
    hostile = {"-Secho INJECTED #": "1"}
    created = await http.post("/api/config/ssh/profiles", json={**GPU, "env_vars": hostile})
    assert created.status_code == 422
    assert "is not a variable name" in created.json()["detail"]

    await http.post("/api/config/ssh/profiles", json={**GPU, "env_vars": {"OK": "$(id)"}})
    updated = await http.put("/api/config/ssh/profiles/gpu", json={"env_vars": hostile})
    assert updated.status_code == 422
    assert "profile 'gpu': env_vars: " in updated.json()["detail"]

    for remote in ["~", "/", "/home/alice", "$HOME/x", "proj/../.."]:
        mount = {"name": "code", "local": str(project), "remote": remote}
        response = await http.post("/api/config/ssh/profiles/gpu/mounts", json=mount)
        assert response.status_code == 422, remote
        assert response.json()["detail"].startswith("body.remote: "), remote
    stored = (await http.get("/api/config/ssh/profiles")).json()["profiles"]["gpu"]
    assert (stored["env_vars"], stored["mounts"]) == ({"OK": "<redacted>"}, [])


async def test_profile_env_values_are_masked_and_saving_them_back_keeps_them(
    http: httpx.AsyncClient, host: Host
) -> None:
    created = await http.post("/api/config/ssh/profiles", json={**GPU, "env_vars": {"HF_TOKEN": "hf_abcdefghijkl"}})
    listed = await http.get("/api/config/ssh/profiles")
    for response in (created, listed):
        assert "hf_abcdefghijkl" not in response.text
    shown = listed.json()["profiles"]["gpu"]
    assert shown["env_vars"] == {"HF_TOKEN": "<redacted>"}

    saved = await http.put("/api/config/ssh/profiles/gpu", json={**shown, "env_vars": {**shown["env_vars"], "B": "2"}})

    assert saved.status_code == 200
    assert host.profiles.get("gpu").env_vars == {"HF_TOKEN": "hf_abcdefghijkl", "B": "2"}


async def test_an_edits_bad_value_is_said_in_words_under_its_field(http: httpx.AsyncClient) -> None:
    """B37: the edit form showed "port: Input should be less than or equal to 65535"; an update's 422 now names
    the field and says the bound in words (``errors``), as a create's does, and changes nothing."""
    await http.post("/api/config/ssh/profiles", json=GPU)
    for method, path, body in (
        ("PUT", "/api/config/ssh/profiles/gpu", {"port": 70000}),
        ("POST", "/api/config/ssh/profiles", {**GPU, "name": "gpu2", "port": 70000}),
    ):
        refused = await http.request(method, path, json=body)
        assert refused.status_code == 422
        assert refused.json()["errors"] == [{"field": "port", "message": "must be at most 65535"}]
    assert (await http.get("/api/config/ssh/profiles")).json()["profiles"]["gpu"]["port"] == GPU.get("port", 22)


async def test_a_mounts_excludes_are_replaced_and_a_bad_one_is_said_under_its_field(
    http: httpx.AsyncClient, project: Path
) -> None:
    await http.post("/api/config/ssh/profiles", json=GPU)
    await http.post("/api/config/ssh/profiles/gpu/mounts", json={"name": "code", "local": str(project), "remote": "/r"})
    path = "/api/config/ssh/profiles/gpu/mounts/code/exclude"
    replaced = await http.put(path, json={"exclude": ["data/", "*.ckpt"]})
    assert replaced.status_code == 200
    assert replaced.json()["exclude"] == ["data/", "*.ckpt"]
    refused = await http.put(path, json={"exclude": ["ok/", "two\nrules"]})
    assert refused.status_code == 422
    assert refused.json()["errors"] == [
        {
            "field": "exclude",
            "message": "exclude pattern 'two\\nrules' contains a line break or NUL; give one pattern per entry",
        }
    ]
    missing = await http.put("/api/config/ssh/profiles/gpu/mounts/nope/exclude", json={"exclude": []})
    assert missing.status_code == 404
    mounts = (await http.get("/api/config/ssh/profiles")).json()["profiles"]["gpu"]["mounts"]
    assert mounts[0]["exclude"] == ["data/", "*.ckpt"]
