"""The ``svc`` command as a user runs it: real processes, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host import __version__
from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.settings.paths import SvcPaths


def svc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args], capture_output=True, text=True, timeout=120, check=False, cwd=cwd
    )


def test_version() -> None:
    result = svc("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"svc, version {__version__}"


def test_plugins_json_lists_the_builtin_plugins() -> None:
    result = svc("plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    for name in ("local", "ssh", "rsync"):
        assert rows[name]["status"] == "ok"
        assert rows[name]["distribution"] == "svc"
        assert rows[name]["version"] == __version__
    assert rows["local"]["hooks"] == ["svc_transports"]


def test_plugins_table_names_every_plugin() -> None:
    result = svc("plugins")
    assert result.returncode == 0, result.stderr
    for name in ("local", "ssh", "rsync", "svc_transports"):
        assert name in result.stdout


def test_unknown_transport_is_one_line_and_exit_1() -> None:
    result = svc("jobs", "--transport", "nope")
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        "error: unknown transport 'nope'; choose one of: local (from local (svc " + __version__ + "))"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("status", "12abc"), "'12abc' is not a job id"),
        (("cancel", "-5"), "No such option"),  # click < 8.4: "No such option: -5"; since: "No such option '-5'."
        (("submit", "--env", "NOEQUALS", "true"), "--env expects KEY=VALUE"),
        (("submit",), "give either a COMMAND or --script FILE"),
        (("submit", "--time", "soon", "true"), "time_limit: must look like 30, 4:00:00 or 1-00:00:00, got 'soon'"),
        (("submit", "--env", "1BAD=x", "true"), "environment variable names must be shell identifiers"),
    ],
)
def test_bad_input_is_a_usage_error(args: tuple[str, ...], message: str) -> None:
    result = svc(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.cluster
def test_submit_status_logs_cancel_on_the_dev_cluster(slurm_cluster: None, tmp_path: Path) -> None:
    submitted = svc("submit", "--name", "cli job", "--log-dir", str(tmp_path), "--json", "--", "echo", "hello from svc")
    assert submitted.returncode == 0, submitted.stderr
    job = json.loads(submitted.stdout)
    assert job["stdout"] == f"{tmp_path}/cli_job-{job['job_id']}.out"
    for _ in range(60):
        status = json.loads(svc("status", job["job_id"], "--json").stdout)[0]
        if status["state"] == "COMPLETED":
            break
        subprocess.run(["sleep", "0.5"], check=True)
    assert status["name"] == "cli job"
    assert status["state"] == "COMPLETED"
    assert status["started_at"] <= status["ended_at"]  # from accounting, in UTC
    logs = svc("logs", job["job_id"])
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout == "hello from svc\n"

    long = svc("submit", "--log-dir", str(tmp_path), "sleep", "120")
    job_id = long.stdout.strip()
    assert svc("cancel", job_id).returncode == 0
    for _ in range(60):
        state = json.loads(svc("status", job_id, "--json").stdout)[0]["state"]
        if state == "CANCELLED":
            break
        subprocess.run(["sleep", "0.5"], check=True)
    assert state == "CANCELLED"


@pytest.mark.cluster
def test_status_of_an_unknown_job_fails(slurm_cluster: None) -> None:
    result = svc("status", "999999999")
    assert result.returncode == 1
    assert "unknown job id(s): 999999999" in result.stderr


@pytest.mark.cluster
def test_submit_with_a_mount_runs_under_the_mounts_cluster_root(dev_profile: SSHProfile, tmp_path: Path) -> None:
    import uuid

    from svc_host.settings.profiles import ProfileStore

    remote = f"svc-cli-mount-{uuid.uuid4().hex[:6]}"
    local = tmp_path / "project"
    local.mkdir()
    store = ProfileStore(SvcPaths.from_env().profiles_file)
    store.create("dev", dev_profile)
    store.add_mount("dev", Mount(name="proj", local=str(local), remote=remote))
    submitted = svc("submit", "-t", "dev", "-m", "proj", "--work-dir", "run1", "--json", "--", "pwd")
    assert submitted.returncode == 0, submitted.stderr
    job = json.loads(submitted.stdout)
    assert job["stdout"] == f"{remote}/run1/../logs/job-{job['job_id']}.out"  # logs at the mount root
    for _ in range(60):
        if json.loads(svc("status", "-t", "dev", job["job_id"], "--json").stdout)[0]["state"] == "COMPLETED":
            break
        subprocess.run(["sleep", "0.5"], check=True)
    logs = svc("logs", "-t", "dev", job["job_id"])
    assert logs.stdout.rstrip().endswith(f"/{remote}/run1")
    svc_run = svc("submit", "-t", "dev", "-m", "nope", "true")
    assert svc_run.returncode == 1
    assert svc_run.stderr.strip() == "error: Mount 'nope' not found in profile 'dev'"
