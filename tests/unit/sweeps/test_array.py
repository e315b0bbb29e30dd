"""A sweep's cells as one job array: which cells can be one, and the script every task runs (run by bash here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from svc_host.domain.submission import Environment, JobDefinition, Resources
from svc_host.rendering.sbatch import render_sbatch
from svc_host.sweeps.array import array_definition, array_script, dispatch

HOSTILE = ["plain", "it's", "$(touch pwned)", "`touch pwned`", "a;; esac; touch pwned", "semi; colon", "line\nbreak"]


def cell(command: str | list[str], **fields: object) -> JobDefinition:
    return JobDefinition.model_validate({"name": "train", "command": command, "work_dir": "/w", **fields})


def test_cells_differing_only_in_their_command_are_one_array() -> None:
    found = array_definition([cell("echo 1"), cell("echo 2")])
    assert found is not None
    assert found.model_dump(exclude={"command"}) == cell("x").model_dump(exclude={"command"})
    assert found.command == dispatch(["echo 1", "echo 2"])


@pytest.mark.parametrize(
    "other",
    [
        cell("echo 2", resources=Resources(partition="gpu")),
        cell("echo 2", environment=Environment(env_vars={"A": "2"})),
        cell("echo 2", log_dir="elsewhere"),
        cell("echo 2", work_dir="/v"),
        cell("echo 2", name="other"),
        JobDefinition(name="train", script="#!/bin/bash\necho 2\n", work_dir="/w"),
    ],
)
def test_cells_differing_in_anything_else_are_not(other: JobDefinition) -> None:
    first = cell("echo 1", environment=Environment(env_vars={"A": "1"})) if other.environment.env_vars else cell("x")
    assert array_definition([first, other]) is None
    assert array_definition([]) is None


def run_task(script: str, index: int, cwd: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": str(index)}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=cwd, check=False)


def test_each_task_runs_its_cells_list_command_with_values_as_data(tmp_path: Path) -> None:
    script = dispatch([["printf", "%s|", value] for value in HOSTILE])
    for index, value in enumerate(HOSTILE):
        done = run_task(script, index, str(tmp_path))
        assert (done.returncode, done.stdout) == (0, f"{value}|")
    assert not (tmp_path / "pwned").exists()  # nothing was evaluated


def test_a_string_command_runs_exactly_as_its_plain_run_would(tmp_path: Path) -> None:
    commands = ["echo one; exit 3", "printf '%s\\n' \"it's\" | tr a-z A-Z", "x=5\necho $((x * 2))"]
    script = dispatch(commands)
    for index, command in enumerate(commands):
        alone = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
        done = run_task(script, index, str(tmp_path))
        assert (done.returncode, done.stdout) == (alone.returncode, alone.stdout)


def test_an_unknown_task_fails_with_a_message(tmp_path: Path) -> None:
    done = run_task(dispatch(["true"]), 7, str(tmp_path))
    assert (done.returncode, done.stderr) == (2, "svc: no sweep cell for array task 7\n")


def test_the_array_script_logs_per_task_and_reports_paths_by_task_id() -> None:
    definition = array_definition([cell(["echo", "1"]), cell(["echo", "2"])])
    assert definition is not None
    rendered = array_script(render_sbatch(definition), "0-1%1")
    lines = rendered.text.split("\n")
    assert lines[:2] == ["#!/bin/bash", "#SBATCH --array=0-1%1"]
    assert "#SBATCH --output=/w/logs/train-%A_%a.out" in lines
    assert "#SBATCH --error=/w/logs/train-%A_%a.err" in lines
    assert rendered.log_paths_for("41_1") == ("/w/logs/train-41_1.out", "/w/logs/train-41_1.err")


def test_with_fail_fast_a_failing_task_holds_its_array_and_keeps_its_status(tmp_path: Path) -> None:
    """``scontrol`` here is a stand-in on PATH that records its arguments (the dev cluster test holds for real)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "scontrol"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/held\n')
    fake.chmod(0o755)
    script = dispatch(["echo ok", "echo no; exit 3", "false"], fail_fast=True)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SLURM_ARRAY_JOB_ID": "41"}
    codes = []
    for index in range(3):
        done = subprocess.run(
            ["bash", "-c", script],
            capture_output=True,
            text=True,
            env={**env, "SLURM_ARRAY_TASK_ID": str(index)},
            check=False,
        )
        codes.append((done.returncode, done.stdout))
    assert codes == [(0, "ok\n"), (3, "no\n"), (1, "")]
    assert (tmp_path / "held").read_text() == "hold 41\nhold 41\n"  # once per failed task, none for the success
