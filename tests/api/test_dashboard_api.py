"""The dashboard's server side: its files and page fallback, and the read-only helper endpoints it uses."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

import svc_plugin_rsync.hooks
import svc_plugin_ssh.hooks
from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.host import Host
from svc_host.settings.paths import SvcPaths

DEV_HOME = Path("/home/svcdev")


@pytest.fixture(autouse=True)
def plugins(svc_register_plugin: Callable[..., None]) -> None:
    svc_register_plugin(svc_plugin_ssh.hooks, "ssh", distribution="svc", version="0")
    svc_register_plugin(svc_plugin_rsync.hooks, "rsync", distribution="svc", version="0")


# -- files and pages ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/jobs", "/jobs/42", "/runs/1b2c", "/settings?tab=profiles", "/apix"])
async def test_every_page_path_answers_the_shell(svc_api_client: httpx.AsyncClient, path: str) -> None:
    response = await svc_api_client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="/static/js/app.js">' in response.text
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


@pytest.mark.parametrize(
    ("path", "content_type"),
    [("/static/js/app.js", "text/javascript; charset=utf-8"), ("/static/css/app.css", "text/css; charset=utf-8")],
)
async def test_static_files_have_their_type_and_revalidate_by_etag(
    svc_api_client: httpx.AsyncClient, path: str, content_type: str
) -> None:
    first = await svc_api_client.get(path)
    assert first.status_code == 200
    assert first.headers["content-type"] == content_type
    assert first.headers["cache-control"] == "no-cache"
    again = await svc_api_client.get(path, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert again.content == b""


@pytest.mark.parametrize(
    "path", ["/static/js/missing.js", "/static/%2e%2e/%2e%2e/api/routes/web.py", "/static/js", "/favicon.ico"]
)
async def test_no_file_outside_the_static_folder_is_served(svc_api_client: httpx.AsyncClient, path: str) -> None:
    response = await svc_api_client.get(path)
    assert response.status_code == 404
    assert "detail" in response.json()


@pytest.mark.parametrize("path", ["/api/nothing-here", "/openapi.json", "/docs"])
async def test_the_api_and_its_docs_are_not_shadowed_by_the_shell(svc_api_client: httpx.AsyncClient, path: str) -> None:
    response = await svc_api_client.get(path)
    assert not response.headers["content-type"].startswith("text/html") or path == "/docs"
    if path == "/docs":
        assert "swagger" in response.text.lower()
    if path == "/api/nothing-here":
        assert response.status_code == 404


# -- script preview -----------------------------------------------------------------------------------------


async def test_preview_renders_a_command_with_its_resources(svc_api_client: httpx.AsyncClient) -> None:
    body = {
        "name": "train",
        "command": "python train.py --lr 3e-4",
        "resources": {"gpus_per_node": 2, "partition": "gpu", "time_limit": "4:00:00"},
        "environment": {"env_vars": {"SEED": "1"}},
    }
    response = await svc_api_client.post("/api/scripts/preview", json=body)
    assert response.status_code == 200
    script = response.json()["script"]
    assert script.startswith("#!")
    assert "--partition=gpu" in script
    assert "python train.py --lr 3e-4" in script
    assert "SEED" in script
    assert response.json()["stdout_path"].endswith("%j.out")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"name": "x", "command": "true", "resources": {"time_limit": "two hours"}}, "time_limit"),
        ({"name": "x"}, "exactly one of 'command' or 'script'"),
        ({"name": "x", "command": "true", "environment": {"env_vars": {"1BAD": "v"}}}, "shell identifiers"),
    ],
)
async def test_preview_errors_name_the_field(
    svc_api_client: httpx.AsyncClient, body: dict[str, object], words: str
) -> None:
    response = await svc_api_client.post("/api/scripts/preview", json=body)
    assert response.status_code == 422
    assert words in response.json()["detail"]


# -- configuration layers -----------------------------------------------------------------------------------


async def test_layers_say_where_each_value_comes_from(svc_api_client: httpx.AsyncClient) -> None:
    partial = {"resources": {"partition": "gpu"}, "environment": {"env_vars": {"WANDB_API_KEY": "k-123"}}}
    assert (await svc_api_client.put("/api/config", json=partial)).status_code == 200
    response = await svc_api_client.get("/api/config/layers")
    assert "k-123" not in response.text  # job variables are where tokens live
    body = response.json()
    masked = {"key": "environment.env_vars", "value": {"WANDB_API_KEY": "<redacted>"}, "source": "user"}
    assert masked in body["values"]
    values = {v["key"]: v for v in body["values"]}
    assert values["resources.partition"] == {"key": "resources.partition", "value": "gpu", "source": "user"}
    assert values["log_dir"] == {"key": "log_dir", "value": "logs", "source": "default"}
    assert [layer["source"] for layer in body["layers"]] == ["user"]


async def test_layers_show_an_untrusted_project_file_as_ignored(
    svc_api_client: httpx.AsyncClient, svc_paths: SvcPaths
) -> None:
    (svc_paths.project_dir / ".svc.json").write_text('{"log_dir": "/tmp/elsewhere"}')
    body = (await svc_api_client.get("/api/config/layers")).json()
    (project,) = body["layers"]
    assert (project["source"], project["keys"]) == ("project", [])
    assert "svc config trust" in project["ignored"]
    assert {"key": "log_dir", "value": "logs", "source": "default"} in body["values"]


# -- profile test -------------------------------------------------------------------------------------------


async def test_testing_an_unknown_profile_is_404(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.post("/api/config/ssh/profiles/nope/test")
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]


async def test_a_profile_that_cannot_connect_gets_a_message_without_its_key_path(
    svc_api_client: httpx.AsyncClient, svc_test_host: Host, tmp_path: Path
) -> None:
    key = tmp_path / "secret-key"
    key.write_text("not a key")
    svc_test_host.profiles.create(
        "closed", SSHProfile(hostname="127.0.0.1", port=1, username="nobody", key_filename=str(key))
    )
    await svc_test_host.reload_profiles()
    response = await svc_api_client.post("/api/config/ssh/profiles/closed/test")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is False
    assert body["message"]
    assert str(key) not in body["message"]


# -- against the dev cluster --------------------------------------------------------------------------------


@pytest.mark.cluster
async def test_a_profile_for_the_dev_sshd_answers_with_its_partitions(
    svc_api_client: httpx.AsyncClient, svc_test_host: Host, dev_profile: SSHProfile
) -> None:
    svc_test_host.profiles.create("dev", dev_profile)
    await svc_test_host.reload_profiles()
    body = (await svc_api_client.post("/api/config/ssh/profiles/dev/test")).json()
    assert body["ok"] is True, body
    assert "debug" in body["partitions"]


@pytest.fixture
async def mirrored(svc_test_host: Host, dev_profile: SSHProfile, tmp_path: Path) -> tuple[Path, Path]:
    """The dev profile current, with mount ``proj`` whose cluster side holds a file the local side lacks."""
    local = tmp_path / "proj"
    local.mkdir()
    (local / "keep.txt").write_text("kept\n")
    relative = f"svc-web-tests/{uuid.uuid4().hex[:8]}"
    svc_test_host.profiles.create("dev", dev_profile)
    svc_test_host.profiles.add_mount("dev", Mount(name="proj", local=str(local), remote=relative))
    svc_test_host.profiles.activate("dev")
    await svc_test_host.reload_profiles()
    return local, DEV_HOME / relative


@pytest.mark.cluster
async def test_inspect_then_a_mirror_capped_at_the_deletions_shown(
    svc_api_client: httpx.AsyncClient, mirrored: tuple[Path, Path]
) -> None:
    local, remote = mirrored
    try:
        assert (await svc_api_client.post("/api/files/sync", json={"mount": "proj"})).status_code == 200
        shutil.copy(remote / "keep.txt", remote / "stale.txt")
        shutil.chown(remote / "stale.txt", "svcdev", "svcdev")

        report = (await svc_api_client.get("/api/files/inspect", params={"mount": "proj"})).json()
        assert report["mirror_delete_candidates"] == 1
        assert report["mirror_delete_candidate_paths"] == ["stale.txt"]
        assert "local" not in report
        assert str(local) not in str(report)

        dry = (await svc_api_client.post("/api/files/mirror", json={"mount": "proj"})).json()
        assert dry["dry_run"] is True
        assert dry["deleted_paths"] == ["stale.txt"]
        assert (remote / "stale.txt").exists()  # a dry run changes nothing

        (local / "gone.txt").write_text("x")
        (await svc_api_client.post("/api/files/sync", json={"mount": "proj"})).raise_for_status()
        (local / "gone.txt").unlink()  # now two entries would go, but only one was shown: refused
        refused = await svc_api_client.post(
            "/api/files/mirror", json={"mount": "proj", "dry_run": False, "max_delete": 1}
        )
        assert refused.status_code == 502
        assert (remote / "stale.txt").exists()

        done = await svc_api_client.post("/api/files/mirror", json={"mount": "proj", "dry_run": False, "max_delete": 2})
        assert done.status_code == 200
        assert done.json()["entries_deleted"] == 2
        assert not (remote / "stale.txt").exists()
        assert (remote / "keep.txt").read_text() == "kept\n"
    finally:
        shutil.rmtree(remote, ignore_errors=True)


async def test_inspect_without_a_profile_is_503(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.get("/api/files/inspect", params={"mount": "proj"})
    assert response.status_code == 503


@pytest.mark.cluster
async def test_the_batch_script_of_a_submitted_job(
    svc_api_client: httpx.AsyncClient, local_transport: None, svc_test_host: Host
) -> None:
    script = "#!/bin/bash\n#SBATCH --hold\nexport HF_TOKEN='hf_secret_value'\necho from-the-script\n"
    job = (await svc_api_client.post("/api/jobs", json={"name": "held", "script_content": script})).json()
    try:
        response = await svc_api_client.get(f"/api/jobs/{job['job_id']}/script")
        assert response.status_code == 200
        assert "echo from-the-script" in response.json()["script"]
        assert "export HF_TOKEN=<redacted>" in response.json()["script"]
        assert "hf_secret_value" not in response.text
    finally:
        await svc_api_client.delete(f"/api/jobs/{job['job_id']}")
    assert (await svc_api_client.get("/api/jobs/99999999/script")).status_code == 404
