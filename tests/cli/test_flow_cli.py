"""``svc flow`` as a user runs it: real processes, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKFLOW = """\
name: cli-flow
args: {word: hello}
jobs:
  - {name: first, command: "echo {{ word }} > first.out"}
  - {name: second, command: "test -f first.out", depends_on: [first]}
"""


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", "flow", *args], capture_output=True, text=True, timeout=180, check=False
    )


@pytest.fixture
def flow_file() -> Path:
    path = Path.cwd() / "flow.yaml"
    path.write_text(WORKFLOW)
    return path


def test_validate(flow_file: Path) -> None:
    good = svc("validate", str(flow_file))
    assert (good.returncode, good.stdout) == (0, "valid: cli-flow (2 jobs: first, second)\n")
    bad = Path("bad.yaml")
    bad.write_text("name: bad\njobs:\n  - {name: a}\n  - {name: b, command: x, depends_on: [ghost]}\n")
    result = svc("validate", "bad.yaml")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "bad.yaml: line 3: jobs[0]: give 'command' (a regular job) or 'script_path' (a shell job)",
        "bad.yaml: line 4: jobs[1].depends_on[0]: job 'b' depends on unknown job 'ghost'",
    ]
    as_json = svc("validate", "bad.yaml", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["valid"] is False
    missing = svc("validate", "nothere.yaml")
    assert (missing.returncode, missing.stderr.strip()) == (1, "error: workflow file nothere.yaml not found")


def test_dry_run_submits_nothing(flow_file: Path) -> None:
    result = svc("run", str(flow_file), "--dry-run", "--from", "second", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "dry_run": True,
        "workflow": "cli-flow",
        "jobs_to_execute": [{"name": "second", "depends_on": [], "command": "test -f first.out"}],
    }
    table = svc("run", str(flow_file), "--dry-run", "--arg", "word=bye")
    assert table.returncode == 0
    assert "echo bye > first.out" in table.stdout
    assert not Path("logs").exists()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ("--arg", "word=python:1"),
            1,
            "error: args at 'word' contains 'python:' prefix which is not allowed: 'python:1'",
        ),
        (("--arg", "noequals"), 2, "--arg expects NAME=VALUE, got 'noequals'"),
        (("--mount", "proj"), 1, "error: mount requires an SSH transport; pass transport='<profile>'"),
        (("--only", "ghost"), 1, "error: single_job: job 'ghost' is not in workflow 'cli-flow'; jobs: first, second"),
        (("--transport", "nope"), 1, "error: unknown transport 'nope'"),
    ],
)
def test_bad_runs_are_one_line_errors(flow_file: Path, args: tuple[str, ...], code: int, message: str) -> None:
    result = svc("run", str(flow_file), *args)
    assert result.returncode == code
    assert message in result.stderr
    if code == 1:
        assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_run_watches_until_the_end(flow_file: Path) -> None:
    result = svc("run", str(flow_file), "--arg", "word=bye")
    assert result.returncode == 0, result.stderr
    assert "cli-flow: completed" in result.stdout
    assert result.stdout.count("COMPLETED") == 2
    assert Path("first.out").read_text() == "bye\n"
    runs = json.loads(svc("runs", "--json").stdout)
    assert [(run["workflow_name"], run["status"], run["triggered_by"]) for run in runs] == [
        ("cli-flow", "completed", "cli")
    ]
    shown = json.loads(svc("show", runs[0]["id"], "--json").stdout)
    assert shown["job_statuses"] == {"first": "COMPLETED", "second": "COMPLETED"}


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_a_failed_run_exits_1_with_the_reason() -> None:
    Path("fail.yaml").write_text("name: fails\njobs:\n  - {name: boom, command: 'exit 4'}\n")
    result = svc("run", "fail.yaml", "--json")
    assert result.returncode == 1
    run = json.loads(result.stdout)
    assert run["status"] == "failed"
    assert result.stderr.strip() == f"error: run {run['id']} failed: job 'boom' ended FAILED (exit code 4)"


@pytest.mark.cluster
@pytest.mark.usefixtures("slurm_cluster")
def test_detach_and_cancel() -> None:
    Path("slow.yaml").write_text(
        "name: slow\njobs:\n  - {name: nap, command: 'sleep 120'}\n"
        "  - {name: after, command: 'true', depends_on: [nap]}\n"
    )
    detached = svc("run", "slow.yaml", "--detach")
    assert detached.returncode == 0, detached.stderr
    run_id = detached.stdout.strip()
    assert len(run_id) == 36
    cancelled = svc("cancel", run_id)
    assert (cancelled.returncode, cancelled.stdout.strip()) == (0, f"cancelled run {run_id}")
    again = svc("cancel", run_id)
    assert (again.returncode, again.stderr.strip()) == (
        1,
        f"error: workflow run {run_id} is already cancelled; nothing to cancel",
    )
    unknown = svc("cancel", "nope")
    assert (unknown.returncode, unknown.stderr.strip()) == (1, "error: workflow run 'nope' not found")
    shown = json.loads(svc("show", run_id, "--json").stdout)
    assert shown["status"] == "cancelled"
    assert shown["job_statuses"]["after"] == "CANCELLED"
