"""REST "Workflows": every endpoint and every status code of the spec, runs on the dev cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.host import Host
from svc_host.settings.paths import SvcPaths
from svc_host.testing.waiting import eventually

GOOD = """\
name: pipeline
args: {greeting: hello}
jobs:
  - name: prep
    command: "echo {{ greeting }} > prep.out"
  - name: train
    command: [bash, -c, "test -f prep.out"]
    depends_on: [prep]
    resources: {partition: debug, time_limit: "0:05:00"}
"""


@pytest.fixture
async def client(svc_api_client: httpx.AsyncClient, svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    yield svc_api_client
    await svc_test_host.close_services()


@pytest.fixture
def workflows(svc_paths: SvcPaths) -> Path:
    return svc_paths.state_dir / "workflows"


async def upload(client: httpx.AsyncClient, text: str = GOOD, filename: str = "pipeline.yaml") -> httpx.Response:
    return await client.post("/api/workflows/upload", json={"yaml": text, "filename": filename})


# -- files ----------------------------------------------------------------------------------------------------


async def test_validate(client: httpx.AsyncClient) -> None:
    assert (await client.post("/api/workflows/validate", json={"yaml": GOOD})).json() == {"valid": True}
    duplicate = "name: d\njobs:\n  - {name: a, command: x}\n  - {name: a, command: y}\n"
    response = await client.post("/api/workflows/validate", json={"yaml": duplicate})
    assert response.status_code == 200
    assert response.json() == {
        "valid": False,
        "errors": ["line 4: jobs[1].name: duplicate job name 'a' (first defined at jobs[0])"],
    }
    assert (await client.post("/api/workflows/validate", json={})).status_code == 422


async def test_upload_saves_and_replaces(client: httpx.AsyncClient, workflows: Path) -> None:
    response = await upload(client)
    assert response.status_code == 200
    assert response.json() == {
        "status": "uploaded",
        "name": "pipeline",
        "filename": "pipeline.yaml",
        "workflow_name": "pipeline",
        "job_count": 2,
        "job_names": ["prep", "train"],
    }
    assert (workflows / "pipeline.yaml").read_text() == GOOD
    again = await upload(client, GOOD.replace("hello", "bye"), "pipeline.yml")
    assert again.status_code == 200
    assert sorted(path.name for path in workflows.iterdir()) == ["pipeline.yml"]


@pytest.mark.parametrize(
    ("filename", "detail"),
    [
        ("bad name.yaml", "invalid filename 'bad name.yaml': use letters, digits, '-' and '_' before the .yaml/.yml"),
        ("../escape.yaml", "invalid filename '../escape.yaml': use letters, digits, '-' and '_' before"),
        ("wf.txt", "invalid filename 'wf.txt': the extension must be .yaml or .yml"),
        ("wf", "invalid filename 'wf': the extension must be .yaml or .yml"),
        ("runs.yaml", "invalid filename 'runs.yaml'"),
    ],
)
async def test_upload_filename_rules_are_422(
    client: httpx.AsyncClient, workflows: Path, filename: str, detail: str
) -> None:
    response = await upload(client, filename=filename)
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail)
    assert not workflows.exists() or not list(workflows.iterdir())


async def test_upload_over_1_mb_is_413(client: httpx.AsyncClient) -> None:
    response = await upload(client, GOOD + "#" * (1024 * 1024))
    assert response.status_code == 413
    assert "over the 1048576 byte limit" in response.json()["detail"]


async def test_upload_rejects_python_args_and_invalid_workflows(client: httpx.AsyncClient, workflows: Path) -> None:
    evil = GOOD.replace("greeting: hello", "greeting: \"python:__import__('os')\"")
    response = await upload(client, evil)
    assert response.status_code == 422
    assert response.json() == {
        "detail": "args at 'greeting' contains 'python:' prefix which is not allowed: 'python:__import__('os')'"
    }
    broken = await upload(client, "name: x\njobs: [{name: a}]\n")
    assert broken.status_code == 422
    assert broken.json()["detail"] == "line 2: jobs[0]: give 'command' (a regular job) or 'script_path' (a shell job)"
    assert not workflows.exists() or not list(workflows.iterdir())


CREATE = {
    "name": "made",
    "jobs": [
        {"name": "a", "command": ["echo", "a"], "resources": {"nodes": 1, "partition": "debug"}},
        {"name": "b", "command": ["echo", "b"], "depends_on": ["afterany:a"], "retry": 1},
    ],
}


async def test_create_returns_the_workflow_and_writes_yaml(client: httpx.AsyncClient, workflows: Path) -> None:
    response = await client.post("/api/workflows/create", json=CREATE)
    assert response.status_code == 200
    assert response.json() == {
        "name": "made",
        "jobs": [
            {
                "name": "a",
                "job_id": None,
                "status": "UNKNOWN",
                "depends_on": [],
                "command": ["echo", "a"],
                "resources": {"nodes": 1, "gpus_per_node": None, "partition": "debug", "time_limit": None},
            },
            {
                "name": "b",
                "job_id": None,
                "status": "UNKNOWN",
                "depends_on": ["afterany:a"],
                "command": ["echo", "b"],
                "resources": {"nodes": None, "gpus_per_node": None, "partition": None, "time_limit": None},
            },
        ],
    }
    assert (workflows / "made.yaml").read_text().startswith("name: made\njobs:\n- name: a\n")
    assert (
        await client.post("/api/workflows/validate", json={"yaml": (workflows / "made.yaml").read_text()})
    ).json() == {"valid": True}
    again = await client.post("/api/workflows/create", json=CREATE)
    assert again.status_code == 409
    assert again.json() == {"detail": "workflow 'made' already exists"}


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({**CREATE, "name": "bad name"}, "invalid workflow name 'bad name': use 1-100 letters, digits, '-' or '_'"),
        (
            {"name": "dup", "jobs": [{"name": "a", "command": ["x"]}, {"name": "a", "command": ["y"]}]},
            "jobs[1].name: duplicate job name 'a' (first defined at jobs[0])",
        ),
        (
            {
                "name": "cyc",
                "jobs": [
                    {"name": "a", "command": ["x"], "depends_on": ["b"]},
                    {"name": "b", "command": ["y"], "depends_on": ["a"]},
                ],
            },
            "jobs: dependency cycle: a -> b -> a",
        ),
        ({"name": "schema", "jobs": [{"name": "a", "command": ["x"], "retry": -1}]}, "jobs[0].retry: Input should be"),
        ({"name": "extra", "jobs": [{"name": "a", "command": ["x"], "gpus": 2}]}, "jobs[0].gpus: Extra inputs are"),
        ({"name": "nojobs"}, "body.jobs: Field required"),
    ],
)
async def test_create_validation_is_422(
    client: httpx.AsyncClient, workflows: Path, body: dict[str, Any], detail: str
) -> None:
    response = await client.post("/api/workflows/create", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith(detail)
    assert not workflows.exists() or not list(workflows.iterdir())


async def test_list_get_delete(client: httpx.AsyncClient, workflows: Path) -> None:
    assert (await client.get("/api/workflows")).json() == []
    await upload(client)
    workflows.joinpath("broken.yaml").write_text("name: broken\njobs: []\n")
    listed = (await client.get("/api/workflows")).json()
    assert listed == [
        {
            "name": "broken",
            "workflow_name": None,
            "job_count": 0,
            "job_names": [],
            "valid": False,
            "errors": ["line 2: jobs: List should have at least 1 item after validation, not 0"],
        },
        {
            "name": "pipeline",
            "workflow_name": "pipeline",
            "job_count": 2,
            "job_names": ["prep", "train"],
            "valid": True,
        },
    ]
    got = await client.get("/api/workflows/pipeline")
    assert got.status_code == 200
    body = got.json()
    assert (body["name"], body["filename"], body["valid"], body["raw_yaml"]) == ("pipeline", "pipeline", True, GOOD)
    assert body["args"] == {"greeting": "hello"}
    assert body["jobs"][0]["command"] == "echo hello > prep.out"
    assert body["jobs"][1]["resources"]["time_limit"] == "0:05:00"
    assert body["jobs"][1]["environment"] == {"conda": None, "venv": None, "env_vars": {}}
    assert (await client.get("/api/workflows/nothere")).status_code == 404
    assert (await client.get("/api/workflows/bad%20name")).status_code == 422
    deleted = await client.delete("/api/workflows/pipeline")
    assert (deleted.status_code, deleted.json()) == (200, {"status": "deleted", "name": "pipeline"})
    assert not (workflows / "pipeline.yaml").exists()
    assert (await client.delete("/api/workflows/pipeline")).status_code == 404
    assert (await client.delete("/api/workflows/bad%20name")).status_code == 422


async def test_the_list_follows_files_edited_by_hand(client: httpx.AsyncClient, workflows: Path) -> None:
    await upload(client)
    assert (await client.get("/api/workflows")).json()[0]["job_names"] == ["prep", "train"]

    (workflows / "pipeline.yaml").write_text(GOOD.replace("name: train", "name: fit"))
    assert (await client.get("/api/workflows")).json()[0]["job_names"] == ["prep", "fit"]
    (workflows / "pipeline.yaml").write_text("name: pipeline\njobs: []\n")
    assert (await client.get("/api/workflows")).json()[0]["valid"] is False
    (workflows / "pipeline.yaml").write_text(GOOD)
    assert (await client.get("/api/workflows")).json()[0]["job_names"] == ["prep", "train"]


# -- runs -----------------------------------------------------------------------------------------------------


async def wait_run(
    client: httpx.AsyncClient, run_id: str, wanted: set[str], until: Callable[[dict[str, Any]], bool] | None = None
) -> dict[str, Any]:
    """The run's detail once its status is in ``wanted`` (and ``until`` holds for it, if given)."""

    async def shown() -> dict[str, Any]:
        return dict((await client.get(f"/api/workflows/runs/{run_id}")).json())

    return await eventually(
        shown,
        until=lambda body: body["status"] in wanted and (until is None or until(body)),
        timeout=120,
        interval=0.5,
        what=f"run {run_id} reaching {sorted(wanted)}",
    )


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_run_is_202_and_completes(client: httpx.AsyncClient) -> None:
    await upload(client)
    response = await client.post("/api/workflows/pipeline/run")
    assert response.status_code == 202, response.text
    run = response.json()
    assert run["status"] == "running"
    assert run["workflow_name"] == "pipeline"
    assert run["completed_at"] is None
    assert run["error"] is None
    assert run["triggered_by"] == "web"
    assert set(run["job_ids"]) == {"prep", "train"}
    assert all(isinstance(job_id, str) and job_id.isdigit() for job_id in run["job_ids"].values())
    done = await wait_run(client, run["id"], {"completed", "failed"})
    assert done["status"] == "completed"
    assert done["job_statuses"] == {"prep": "COMPLETED", "train": "COMPLETED"}
    assert done["completed_at"] is not None
    listed = (await client.get("/api/workflows/runs")).json()
    assert [row["id"] for row in listed] == [run["id"]]
    assert listed[0]["job_statuses"] == {"prep": "COMPLETED", "train": "COMPLETED"}
    cancelled = await client.post(f"/api/workflows/runs/{run['id']}/cancel")
    assert cancelled.status_code == 422
    assert cancelled.json() == {"detail": f"workflow run {run['id']} is already completed; nothing to cancel"}


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_run_with_a_body_and_cancel(client: httpx.AsyncClient) -> None:
    text = (
        "name: slow\nargs: {t: 1}\njobs:\n"
        "  - {name: a, command: 'sleep {{ t }}'}\n  - {name: b, command: 'true', depends_on: [a]}\n"
    )
    assert (await upload(client, text, "slow.yaml")).status_code == 200
    response = await client.post("/api/workflows/slow/run", json={"args": {"t": 60}, "to_job": "a"})
    assert response.status_code == 202, response.text
    run = response.json()
    assert list(run["job_ids"]) == ["a"]
    assert run["args"] == {"t": 60}
    cancelled = await client.post(f"/api/workflows/runs/{run['id']}/cancel")
    assert (cancelled.status_code, cancelled.json()) == (200, {"status": "cancelled", "run_id": run["id"]})
    shown = await wait_run(client, run["id"], {"cancelled"})
    assert shown["completed_at"] is not None
    await wait_run(client, run["id"], {"cancelled"}, lambda body: body["job_statuses"] == {"a": "CANCELLED"})
    assert (await client.post(f"/api/workflows/runs/{run['id']}/cancel")).status_code == 422


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_the_jobs_list_names_the_upstream_jobs_of_workflow_jobs(client: httpx.AsyncClient) -> None:
    text = (
        "name: deps\njobs:\n  - {name: a, command: 'sleep 60'}\n"
        "  - {name: b, command: 'true', depends_on: ['afterok:a']}\n"
    )
    assert (await upload(client, text, "deps.yaml")).status_code == 200
    run = (await client.post("/api/workflows/deps/run")).json()
    try:
        ids = {name: int(job_id) for name, job_id in run["job_ids"].items()}
        listed = {job["job_id"]: job for job in (await client.get("/api/jobs")).json()}
        assert (listed[ids["a"]]["depends_on"], listed[ids["b"]]["depends_on"]) == ([], ["a"])
        assert (await client.get(f"/api/jobs/{ids['b']}")).json()["depends_on"] == ["a"]
    finally:
        await client.post(f"/api/workflows/runs/{run['id']}/cancel")


async def test_run_and_run_paths_404_and_422(client: httpx.AsyncClient, workflows: Path) -> None:
    assert (await client.post("/api/workflows/nothere/run")).status_code == 404
    assert (await client.post("/api/workflows/bad%20name/run")).status_code == 422
    assert (await client.get("/api/workflows/runs/0b7d0a6e-0000-4000-8000-000000000000")).status_code == 404
    assert (await client.post("/api/workflows/runs/not-a-run/cancel")).status_code == 404
    needs_x = "name: p\njobs: [{name: a, command: 'echo {{ x }}'}]\n"
    assert (await upload(client, needs_x, "p.yaml")).status_code == 422  # templates use declared args only
    workflows.mkdir(parents=True)
    (workflows / "p.yaml").write_text(needs_x)
    invalid = await client.post("/api/workflows/p/run")
    assert invalid.status_code == 422
    assert invalid.json() == {"detail": "line 2: jobs[0].command: template error: 'x' is undefined"}
    python = await client.post("/api/workflows/p/run", json={"args": {"x": "python:1"}})
    assert python.status_code == 422
    assert python.json() == {"detail": "args at 'x' contains 'python:' prefix which is not allowed: 'python:1'"}
    selection = await client.post("/api/workflows/p/run", json={"args": {"x": 1}, "single_job": "zz"})
    assert selection.status_code == 422
    assert selection.json() == {"detail": "single_job: job 'zz' is not in workflow 'p'; jobs: a"}
    assert (await client.get("/api/workflows/runs")).json() == []  # nothing half-made


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_render_failure_is_500_and_recorded(client: httpx.AsyncClient) -> None:
    await upload(client, "name: r\njobs:\n  - {name: a, command: 'true', log_dir: 'logs%x'}\n", "r.yaml")
    response = await client.post("/api/workflows/r/run")
    assert response.status_code == 500
    assert "script rendering failed" in response.json()["detail"]
    [run] = (await client.get("/api/workflows/runs")).json()
    assert run["status"] == "failed"
    assert run["error"].startswith("script rendering failed: job 'a': log directory")
    assert run["job_ids"] == {}
    assert run["completed_at"] is not None


@pytest.mark.cluster
@pytest.mark.usefixtures("local_transport")
async def test_submission_failure_is_502_with_submitted_jobs_cancelled(client: httpx.AsyncClient) -> None:
    text = (
        "name: s\njobs:\n  - {name: a, command: 'sleep 60'}\n"
        "  - {name: b, command: 'true', resources: {partition: nope}}\n"
    )
    await upload(client, text, "s.yaml")
    response = await client.post("/api/workflows/s/run")
    assert response.status_code == 502
    assert "submission of job 'b' failed: sbatch failed" in response.json()["detail"]
    [run] = (await client.get("/api/workflows/runs")).json()
    assert run["status"] == "failed"
    assert run["error"].startswith("submission of job 'b' failed")
    run = await wait_run(client, run["id"], {"failed"}, lambda body: body["job_statuses"]["a"] == "CANCELLED")
    assert run["job_statuses"] == {"a": "CANCELLED", "b": "FAILED"}


@pytest.mark.cluster
async def test_sync_failure_is_502_and_the_run_is_failed(
    client: httpx.AsyncClient, svc_test_host: Host, dev_profile: SSHProfile, tmp_path: Path
) -> None:
    import svc_plugin_rsync.hooks
    import svc_plugin_ssh.hooks

    local = tmp_path / "proj"
    local.mkdir()
    profile = dev_profile.model_copy(
        update={"mounts": [Mount(name="proj", local=str(local), remote="/proc/forbidden")]}
    )
    svc_test_host.profiles.create("dev", profile)
    svc_test_host.plugins.register(svc_plugin_ssh.hooks, "ssh", distribution="svc", version="0")
    svc_test_host.plugins.register(svc_plugin_rsync.hooks, "rsync", distribution="svc", version="0")
    await svc_test_host.reload_profiles()
    await upload(client, "name: m\ndefault_project: proj\njobs: [{name: a, command: 'true'}]\n", "m.yaml")
    response = await client.post("/api/workflows/m/run", json={"transport": "dev"})
    assert response.status_code == 502, response.text
    [run] = (await client.get("/api/workflows/runs")).json()
    assert run["status"] == "failed"
    assert run["error"].startswith("sync of mount 'proj' failed: cannot create remote directory '/proc/forbidden'")
    assert response.json()["detail"] == f"workflow run {run['id']}: {run['error']}"
    assert run["job_ids"] == {}
    assert run["transport"] == "dev"


@pytest.mark.cluster
async def test_a_web_workflow_without_work_dir_runs_in_the_login_directory_over_ssh(
    client: httpx.AsyncClient, svc_test_host: Host, dev_profile: SSHProfile
) -> None:
    """sbatch runs a job that names no directory in the login directory; svc does the same and logs under it."""
    import shlex

    import asyncssh

    import svc_plugin_ssh.hooks
    from svc_plugin_ssh.options import connect_options

    svc_test_host.profiles.create("dev", dev_profile)
    svc_test_host.profiles.activate("dev")
    svc_test_host.plugins.register(svc_plugin_ssh.hooks, "ssh", distribution="svc", version="0")
    await svc_test_host.reload_profiles()
    created = await client.post(
        "/api/workflows/create", json={"name": "athome", "jobs": [{"name": "where", "command": "pwd; echo $USER"}]}
    )
    assert created.status_code == 200, created.text
    response = await client.post("/api/workflows/athome/run")
    assert response.status_code == 202, response.text
    done = await wait_run(client, response.json()["id"], {"completed", "failed"})
    assert done["status"] == "completed", done
    job_id = done["job_ids"]["where"]

    target, options = connect_options(dev_profile)
    async with asyncssh.connect(target, **options) as conn:
        home = str((await conn.run("pwd", check=True)).stdout).strip()
        logs = (await client.get(f"/api/jobs/{job_id}/logs")).json()
        try:
            assert logs["stdout"] == f"{home}\n{dev_profile.username}\n"
            assert logs["stderr"] == ""
            assert logs["stdout_path"] == f"{home}/logs/where-{job_id}.out"
            job = (await client.get(f"/api/jobs/{job_id}")).json()
            assert (job["transport"], job["stdout_path"]) == ("dev", logs["stdout_path"])
        finally:
            paths = [f"{home}/logs/where-{job_id}.out", f"{home}/logs/where-{job_id}.err"]
            await conn.run(shlex.join(["rm", "-f", "--", *paths]), check=False)
