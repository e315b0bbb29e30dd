"""``/api/config``, its paths, reset, env and projects endpoints: shapes and status codes of the spec."""

from __future__ import annotations

import errno
import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from svc_host.api.app import create_app
from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.settings.paths import SvcPaths
from svc_host.testing.http import asgi_client, security_for_tests

DEFAULTS: dict[str, Any] = {
    "resources": {
        "nodes": 1,
        "gpus_per_node": 0,
        "ntasks_per_node": 1,
        "cpus_per_task": 1,
        "memory_per_node": None,
        "time_limit": None,
        "partition": None,
        "nodelist": None,
    },
    "environment": {"conda": None, "venv": None, "container": None, "env_vars": {}},
    "notifications": {"chat_webhook_url": None},
    "log_dir": "logs",
    "work_dir": None,
    "rendering": {"renderer": "default"},  # svc's additions to the spec's object (docs/interfaces.md)
    "plugins": {},
}


@pytest.fixture
def paths() -> SvcPaths:
    return SvcPaths.from_env()


@pytest.fixture
async def host(paths: SvcPaths) -> AsyncIterator[Host]:
    host = Host.create("web", paths=paths, plugins=create_plugin_manager(strict=True))
    yield host
    await host.close()


@pytest.fixture
async def http(host: Host) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(host, security=security_for_tests())) as client:
        yield client


@pytest.fixture
def project(home: Path) -> Path:
    directory = home.parent / "work" / "proj"
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def with_mount(host: Host, project: Path) -> Path:
    """An active profile ``gpu`` with mount ``code`` -> ``project``."""
    host.profiles.create("gpu", SSHProfile(hostname="login.example.org", username="alice"))
    host.profiles.add_mount("gpu", Mount(name="code", local=str(project), remote="/scratch/alice/code"))
    host.profiles.activate("gpu")
    return project


# -- /api/config ---------------------------------------------------------------------------------------


def with_plugin_defaults(shown: dict[str, Any]) -> dict[str, Any]:
    """``shown`` with the installed plugins' sections (their defaults, filled in) set aside and checked: the chat
    plugin's and the example site's."""
    assert shown.pop("warnings", []) == []  # GET and PUT say what will do nothing; nothing here
    chat = shown["plugins"].pop("chat")
    assert (chat["format"], chat["retry_seconds"], chat["allow_http_hosts"]) == (None, 5.0, [])
    site = shown["plugins"].pop("site")
    assert (site["login"], site["account"], site["qos"], site["port"]) == (None, None, "normal", 22)
    return shown


async def test_get_config_is_the_default_in_a_fresh_setup(http: httpx.AsyncClient) -> None:
    response = await http.get("/api/config")
    assert response.status_code == 200
    assert with_plugin_defaults(response.json()) == DEFAULTS


async def test_get_config_merges_layers_and_the_server_environment(
    http: httpx.AsyncClient, paths: SvcPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths.system_config.parent.mkdir(parents=True)
    paths.system_config.write_text(json.dumps({"resources": {"partition": "sys", "nodes": 2}}))
    paths.user_config.parent.mkdir(parents=True)
    paths.user_config.write_text(json.dumps({"resources": {"partition": "user"}}))
    monkeypatch.setenv("SVC_LOG_DIR", "env-logs")

    body = (await http.get("/api/config")).json()

    assert body["resources"]["partition"] == "user"
    assert body["resources"]["nodes"] == 2
    assert body["log_dir"] == "env-logs"


async def test_get_config_with_an_invalid_file_names_file_and_field(http: httpx.AsyncClient, paths: SvcPaths) -> None:
    paths.user_config.parent.mkdir(parents=True)
    paths.user_config.write_text(json.dumps({"resources": {"nodes": 0}}))
    response = await http.get("/api/config")
    assert response.status_code == 422
    assert response.json() == {
        "detail": f"{paths.user_config}: resources.nodes: Input should be greater than or equal to 1",
        "errors": [{"field": "resources.nodes", "message": "must be at least 1"}],
    }


WEBHOOK_CONFIG = {"notifications": {"chat_webhook_url": "https://chat.example/hook/SECRET"}}


async def test_a_webhook_no_plugin_delivers_is_a_warning(paths: SvcPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_DISABLE_PLUGINS", "chat")  # as if svc-plugin-chat were not installed
    host = Host.create("web", paths=paths, plugins=create_plugin_manager(strict=True))
    try:
        async with asgi_client(create_app(host, security=security_for_tests())) as client:
            assert (await client.get("/api/config")).json()["warnings"] == []
            saved = (await client.put("/api/config", json=WEBHOOK_CONFIG)).json()
            [warning] = saved["warnings"]
            assert warning.startswith("notifications.chat_webhook_url is set but no installed plugin delivers")
            assert (await client.get("/api/config")).json()["warnings"] == [warning]
            assert saved["notifications"]["chat_webhook_url"] == "<redacted>"
    finally:
        await host.close()


async def test_a_webhook_the_chat_plugin_delivers_is_no_warning(http: httpx.AsyncClient) -> None:
    saved = await http.put("/api/config", json=WEBHOOK_CONFIG)
    assert saved.status_code == 200, saved.text
    assert saved.json()["warnings"] == []


async def test_put_config_saves_a_partial_to_the_user_file(http: httpx.AsyncClient, paths: SvcPaths) -> None:
    response = await http.put("/api/config", json={"resources": {"partition": "gpu", "gpus_per_node": 4}})

    assert response.status_code == 200
    assert response.json()["resources"] == {**DEFAULTS["resources"], "partition": "gpu", "gpus_per_node": 4}
    assert json.loads(paths.user_config.read_text()) == {"resources": {"partition": "gpu", "gpus_per_node": 4}}
    assert stat.S_IMODE(paths.user_config.stat().st_mode) == 0o600
    assert (await http.get("/api/config")).json() == response.json()


@pytest.mark.parametrize(
    ("body", "detail", "words"),
    [
        (
            {"resources": {"nodes": 0}},
            "resources.nodes: Input should be greater than or equal to 1",
            {"field": "resources.nodes", "message": "must be at least 1"},
        ),
        (
            {"resources": {"gpus": 1}},
            "resources.gpus: Extra inputs are not permitted",
            {"field": "resources.gpus", "message": "is not a setting svc knows"},
        ),
        (
            {"log_dir": ""},
            "log_dir: String should have at least 1 character",
            {"field": "log_dir", "message": "must not be empty"},
        ),
        ([1, 2], "body: Input should be a valid dictionary", {"field": "", "message": "must be a valid dictionary"}),
    ],
)
async def test_put_config_validation_is_422_and_writes_nothing(
    http: httpx.AsyncClient, paths: SvcPaths, body: object, detail: str, words: dict[str, str]
) -> None:
    """``detail`` keeps pydantic's wording (scripts match it); ``errors`` says each field's problem in words."""
    response = await http.put("/api/config", json=body)
    assert response.status_code == 422
    assert response.json() == {"detail": detail, "errors": [words]}
    assert not paths.user_config.exists()


async def test_put_config_write_failure_is_500(http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("svc_host.settings.config.write_json_atomic", disk_full)
    response = await http.put("/api/config", json={"log_dir": "out"})
    assert response.status_code == 500
    assert response.json() == {"detail": "could not write the configuration: No space left on device"}


async def test_config_paths_lists_every_candidate(http: httpx.AsyncClient, paths: SvcPaths) -> None:
    await http.put("/api/config", json={"log_dir": "out"})
    response = await http.get("/api/config/paths")
    assert response.status_code == 200
    assert response.json() == [
        {"path": str(paths.system_config), "exists": False, "source": "system"},
        {"path": str(paths.user_config), "exists": True, "source": "user"},
        {"path": str(paths.project_dir / ".svc.json"), "exists": False, "source": "project"},
        {"path": str(paths.project_dir / "svc.json"), "exists": False, "source": "project"},
    ]


async def test_reset_overwrites_the_user_file_with_defaults(http: httpx.AsyncClient, paths: SvcPaths) -> None:
    await http.put("/api/config", json={"resources": {"partition": "gpu"}, "log_dir": "out"})
    response = await http.post("/api/config/reset")
    assert response.status_code == 200
    assert with_plugin_defaults(response.json()) == DEFAULTS
    assert json.loads(paths.user_config.read_text()) == DEFAULTS
    assert [p.name for p in paths.user_config.parent.iterdir() if p.name.endswith(".tmp")] == []


async def test_reset_answers_the_defaults_even_where_other_layers_differ(
    http: httpx.AsyncClient, paths: SvcPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths.system_config.parent.mkdir(parents=True)
    paths.system_config.write_text(json.dumps({"resources": {"partition": "sys"}}))
    monkeypatch.setenv("SVC_LOG_DIR", "env-logs")
    response = await http.post("/api/config/reset")
    assert (response.status_code, with_plugin_defaults(response.json())) == (200, DEFAULTS)
    assert json.loads(paths.user_config.read_text()) == DEFAULTS
    assert (await http.get("/api/config")).json()["log_dir"] == "env-logs"  # the environment still wins


# -- /api/config/env -----------------------------------------------------------------------------------


async def test_env_is_empty_without_svc_variables(http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SVC_SYSTEM_CONFIG")  # the paths of the isolated setup are fixed already
    monkeypatch.delenv("SVC_AGENT")  # what the test setup sets for the CLI
    response = await http.get("/api/config/env")
    assert response.status_code == 200
    assert response.json() == []


async def test_env_lists_variables_and_never_shows_secrets(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "SVC_SLACK_TOKEN": "xoxb-secret-token",
        "CHAT_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/abcdefabcdef",
        "SVC_DATABASE_URL": "postgresql://svc:hunter2@db.example.org/svc",
        "SVC_SSH_KEY": "/home/alice/.ssh/id_ed25519",
        "SVC_ENVIRONMENT__ENV_VARS": '{"HF_TOKEN": "hf_abcdefghijkl"}',
        "SVC_NOTIFICATIONS__CHAT_WEBHOOK_URL": "https://chat.example.org/x/xoxb-secret-token",
    }
    for name, value in {**secrets, "SVC_RESOURCES__PARTITION": "gpu", "SVC_FANCY": "1", "PATHX": "no"}.items():
        monkeypatch.setenv(name, value)

    response = await http.get("/api/config/env")

    assert response.status_code == 200
    rows = {row["name"]: row for row in response.json()}
    assert set(rows) == {*secrets, "SVC_RESOURCES__PARTITION", "SVC_FANCY", "SVC_SYSTEM_CONFIG", "SVC_AGENT"}
    assert rows["SVC_AGENT"]["description"].startswith("whether svc's SSH commands go through the svc agent")
    for row in response.json():
        assert set(row) == {"name", "value", "description"}
    for value in secrets.values():
        assert value not in response.text
    for fragment in ("xoxb-secret-token", "hunter2", "hf_abcdefghijkl", "abcdefabcdef", "id_ed25519"):
        assert fragment not in response.text
    assert rows["SVC_RESOURCES__PARTITION"] == {
        "name": "SVC_RESOURCES__PARTITION",
        "value": "gpu",
        "description": "overrides configuration key resources.partition",
    }
    assert rows["SVC_SSH_KEY"]["description"] == "path to the SSH private key (with SVC_SSH_HOSTNAME)"
    assert rows["SVC_FANCY"] == {"name": "SVC_FANCY", "value": "1", "description": ""}


async def test_the_api_token_is_never_shown(http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_API_TOKEN", "plain-looking-token-value-1234")
    monkeypatch.setenv("SVC_MY_PASSWORD", "hunter2")
    response = await http.get("/api/config/env")
    rows = {row["name"]: row["value"] for row in response.json()}
    assert rows["SVC_API_TOKEN"] == "<redacted>"
    assert rows["SVC_MY_PASSWORD"] == "<redacted>"
    assert "plain-looking-token-value-1234" not in response.text
    assert "hunter2" not in response.text


@pytest.mark.parametrize("password", ["pa/ss", "pa#ss", "pa?ss", "p/a#s?s"])
async def test_a_database_url_is_masked_whatever_its_password_holds(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, password: str
) -> None:
    monkeypatch.setenv("SVC_DATABASE_URL", f"postgresql://svc:{password}w0rd@db.example.org:5432/svc")
    rows = {row["name"]: row["value"] for row in (await http.get("/api/config/env")).json()}
    assert rows["SVC_DATABASE_URL"] == "postgresql://<redacted>"


# -- secrets in the configuration ----------------------------------------------------------------------

WEBHOOK = "https://hooks.slack.com/services/T000/B000/abcdefabcdef"


async def test_config_responses_mask_env_values_and_the_webhook_like_the_env_listing(
    http: httpx.AsyncClient, paths: SvcPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"environment": {"env_vars": {"HF_TOKEN": "hf_abcdefghijkl", "PLAIN": "visible?"}},
            "notifications": {"chat_webhook_url": WEBHOOK}}  # fmt: skip
    put = await http.put("/api/config", json=body)
    monkeypatch.setenv("SVC_ENVIRONMENT__ENV_VARS", '{"FROM_ENV": "env-secret-value"}')
    got = await http.get("/api/config")

    for response in (put, got):
        assert response.status_code == 200
        for secret in ("hf_abcdefghijkl", "visible?", "abcdefabcdef", "env-secret-value"):
            assert secret not in response.text
    assert got.json()["environment"]["env_vars"] == {
        "HF_TOKEN": "<redacted>",
        "PLAIN": "<redacted>",
        "FROM_ENV": "<redacted>",
    }
    assert got.json()["notifications"]["chat_webhook_url"] == "<redacted>"
    env_rows = {row["name"]: row["value"] for row in (await http.get("/api/config/env")).json()}
    assert env_rows["SVC_ENVIRONMENT__ENV_VARS"] == "<redacted>"
    # the stored values are intact
    stored = json.loads(paths.user_config.read_text())
    assert stored["environment"]["env_vars"] == {"HF_TOKEN": "hf_abcdefghijkl", "PLAIN": "visible?"}


async def test_saving_back_what_get_showed_keeps_the_secrets(
    http: httpx.AsyncClient, paths: SvcPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {
        "environment": {"env_vars": {"HF_TOKEN": "hf_abcdefghijkl"}},
        "notifications": {"chat_webhook_url": WEBHOOK},
    }
    await http.put("/api/config", json=body)
    shown = (await http.get("/api/config")).json()
    shown["log_dir"] = "out"
    shown["environment"]["env_vars"]["NEW"] = "1"

    saved = await http.put("/api/config", json=shown)

    assert saved.status_code == 200
    stored = json.loads(paths.user_config.read_text())
    assert stored["environment"]["env_vars"] == {"HF_TOKEN": "hf_abcdefghijkl", "NEW": "1"}
    assert stored["notifications"]["chat_webhook_url"] == WEBHOOK
    assert stored["log_dir"] == "out"
    assert "<redacted>" not in paths.user_config.read_text()


async def test_project_configs_are_masked_and_saving_them_back_keeps_the_secrets(
    http: httpx.AsyncClient, with_mount: Path
) -> None:
    config = {"environment": {"env_vars": {"WANDB_API_KEY": "0123456789abcdef"}}, "log_dir": "logs"}
    put = await http.put("/api/config/projects/code", json=config)
    got = await http.get("/api/config/projects/code")
    for response in (put, got):
        assert response.status_code == 200
        assert response.json()["config"]["environment"]["env_vars"] == {"WANDB_API_KEY": "<redacted>"}
    again = await http.put("/api/config/projects/code", json=got.json()["config"])
    assert again.status_code == 200
    stored = json.loads((with_mount / ".svc.json").read_text())
    assert stored["environment"]["env_vars"] == {"WANDB_API_KEY": "0123456789abcdef"}


# -- /api/config/projects ------------------------------------------------------------------------------


async def test_projects_without_an_active_profile(http: httpx.AsyncClient) -> None:
    assert (await http.get("/api/config/projects")).json() == []
    for method, path in [
        ("GET", "/api/config/projects/code"),
        ("PUT", "/api/config/projects/code"),
        ("POST", "/api/config/projects/code/init"),
    ]:
        response = await http.request(method, path, json={} if method == "PUT" else None)
        assert response.status_code == 400, path
        assert response.json()["detail"].startswith("no active SSH profile")


async def test_projects_list_the_current_profiles_mounts(http: httpx.AsyncClient, with_mount: Path) -> None:
    response = await http.get("/api/config/projects")
    assert response.status_code == 200
    assert response.json() == [
        {
            "mount_name": "code",
            "local_path": str(with_mount),
            "remote_path": "/scratch/alice/code",
            "config_exists": False,
            "config_path": str(with_mount / ".svc.json"),
        }
    ]


async def test_project_config_init_get_put(http: httpx.AsyncClient, with_mount: Path) -> None:
    empty = await http.get("/api/config/projects/code")
    assert empty.status_code == 200
    assert empty.json() == {
        "mount_name": "code",
        "local_path": str(with_mount),
        "config_path": str(with_mount / ".svc.json"),
        "exists": False,
        "config": {},
    }

    created = await http.post("/api/config/projects/code/init")
    assert created.status_code == 200
    assert created.json()["exists"] is True
    assert created.json()["config"]["resources"]["gpus_per_node"] == 1
    assert json.loads((with_mount / ".svc.json").read_text()) == created.json()["config"]

    again = await http.post("/api/config/projects/code/init")
    assert again.status_code == 409
    assert "already exists" in again.json()["detail"]

    saved = await http.put("/api/config/projects/code", json={"resources": {"partition": "a100"}})
    assert saved.status_code == 200
    assert saved.json()["config"] == {"resources": {"partition": "a100"}}
    assert (await http.get("/api/config/projects/code")).json()["config"] == {"resources": {"partition": "a100"}}
    assert (await http.get("/api/config/projects")).json()[0]["config_exists"] is True


async def test_project_config_errors(
    http: httpx.AsyncClient, with_mount: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for method, path in [
        ("GET", "/api/config/projects/nope"),
        ("PUT", "/api/config/projects/nope"),
        ("POST", "/api/config/projects/nope/init"),
    ]:
        response = await http.request(method, path, json={} if method == "PUT" else None)
        assert response.status_code == 404, path
        assert response.json() == {"detail": "mount 'nope' not found in the active SSH profile"}

    invalid = await http.put("/api/config/projects/code", json={"resources": {"time_limit": "soon"}})
    assert invalid.status_code == 422
    assert invalid.json()["detail"].startswith("resources.time_limit: ")
    assert not (with_mount / ".svc.json").exists()

    def disk_full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("svc_host.settings.config.write_atomic", disk_full)
    failed = await http.put("/api/config/projects/code", json={"log_dir": "x"})
    assert failed.status_code == 500
    assert failed.json() == {"detail": "could not write the configuration: No space left on device"}


async def test_plugin_settings_are_shown_changed_and_refused_naming_the_plugin_and_field(
    http: httpx.AsyncClient, paths: SvcPaths
) -> None:
    changed = await http.put("/api/config", json={"plugins": {"chat": {"format": "discord", "retry_seconds": 2}}})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["plugins"]["chat"]["format"], changed.json()["plugins"]["chat"]["timeout_seconds"]) == (
        "discord",
        10.0,
    )
    stored = paths.user_config.read_text()
    refused = await http.put("/api/config", json={"plugins": {"chat": {"format": "irc"}}})
    assert refused.status_code == 422
    assert refused.json()["detail"].startswith("plugin 'chat' settings (plugins.chat): format: Input should be ")
    unknown = await http.put("/api/config", json={"plugins": {"nosuch": {"a": 1}}})
    assert unknown.status_code == 422
    assert unknown.json()["detail"].startswith("plugins.nosuch: no loaded plugin 'nosuch' has settings")
    assert paths.user_config.read_text() == stored


async def test_a_project_files_bad_value_is_said_under_its_field(http: httpx.AsyncClient, with_mount: Path) -> None:
    """The Settings editor shows each problem under its field: a job default's and an exclude pattern's alike."""
    for body, field in (
        ({"resources": {"nodes": 0}}, "resources.nodes"),
        ({"exclude": ["x" * 1025]}, "exclude"),
    ):
        refused = await http.put("/api/config/projects/code", json=body)
        assert refused.status_code == 422
        assert [problem["field"] for problem in refused.json()["errors"]] == [field]
    assert refused.json()["errors"][0]["message"].endswith("is longer than 1024 characters")
    assert not (with_mount / ".svc.json").exists()
