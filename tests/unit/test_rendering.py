"""The ``default`` renderer: directives as sbatch reads them, quoting as bash runs it, user scripts left alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from svc_host.domain.submission import Environment, JobDefinition, RenderedScript, Resources
from svc_host.errors import RenderError
from svc_host.rendering import hooks
from svc_host.rendering.sbatch import render_sbatch, sbatch_word, sbatch_words, template_environment
from svc_host.testing.plugin import skip_or_fail

BASH = shutil.which("bash") or "/bin/bash"
HOSTILE_NAME = "a|b $(touch pwned) \"q\" 'x' ünï # hetjob \\ `id`"


def render(**fields: Any) -> RenderedScript:
    fields.setdefault("name", "job")
    return render_sbatch(JobDefinition(**fields))


def directive_words(text: str) -> list[str]:
    """The words sbatch collects from the leading #SBATCH block (same rules as sbatch 22.05)."""
    words: list[str] = []
    for line in text.split("\n"):
        if line.startswith("#SBATCH"):
            words += sbatch_words(line[len("#SBATCH") :])
        elif line.strip() and not line.lstrip().startswith("#"):
            break
    return words


def options(text: str) -> dict[str, str]:
    return dict(word[2:].partition("=")[::2] for word in directive_words(text) if word.startswith("--"))


def added_options(script: RenderedScript, user_script: str) -> dict[str, str]:
    """The directives the renderer added to a user's script."""
    user_lines = user_script.splitlines()
    return options("\n".join(line for line in script.text.splitlines() if line not in user_lines))


def run_bash(text: str, tmp_path: Path, *, path: str | None = None) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "job.sh"
    script.write_text(text)
    env = {"PATH": path if path is not None else os.environ["PATH"], "HOME": str(tmp_path), "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        [BASH, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30, check=False
    )


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


# --- directives -------------------------------------------------------------------------------------------


def test_every_resource_field_becomes_its_directive() -> None:
    script = render(
        name="train",
        command="python train.py",
        work_dir="/scratch/run",
        log_dir="out",
        dependency="afterok:12:13",
        resources=Resources(
            nodes=2,
            gpus_per_node=4,
            ntasks_per_node=4,
            cpus_per_task=8,
            memory_per_node="64G",
            time_limit="1-02:00:00",
            partition="gpu",
            nodelist="node[01-02]",
        ),
    )
    assert script.text.startswith("#!/bin/bash\n#SBATCH ")
    assert options(script.text) == {
        "job-name": "train",
        "output": "/scratch/run/out/train-%j.out",
        "error": "/scratch/run/out/train-%j.err",
        "nodes": "2",
        "ntasks-per-node": "4",
        "cpus-per-task": "8",
        "gres": "gpu:4",
        "mem": "64G",
        "time": "1-02:00:00",
        "partition": "gpu",
        "nodelist": "node[01-02]",
        "chdir": "/scratch/run",
        "dependency": "afterok:12:13",
    }
    assert script.log_dir == "/scratch/run/out"
    assert script.log_paths_for("77") == ("/scratch/run/out/train-77.out", "/scratch/run/out/train-77.err")


def test_unset_fields_leave_their_directives_out() -> None:
    found = options(render(command="true").text)
    assert set(found) == {"job-name", "output", "error", "nodes", "ntasks-per-node", "cpus-per-task"}
    assert "gres" not in options(render(command="true", resources=Resources(gpus_per_node=0)).text)


def test_relative_work_dir_logs_are_written_relative_to_the_job_directory() -> None:
    # Slurm resolves a relative --output against --chdir; the transport creates log_dir from sbatch's cwd.
    script = render(name="r", command="true", work_dir="runs/a", log_dir="logs")
    found = options(script.text)
    assert (found["chdir"], found["output"], found["error"]) == ("runs/a", "logs/r-%j.out", "logs/r-%j.err")
    assert (script.log_dir, script.stdout_path) == ("runs/a/logs", "runs/a/logs/r-%j.out")
    absolute = render(name="r", command="true", work_dir="runs/a", log_dir="/var/log/jobs")
    assert options(absolute.text)["output"] == absolute.stdout_path == "/var/log/jobs/r-%j.out"


def test_log_file_names_use_the_safe_stem() -> None:
    script = render(name="my job/1", command="true")
    assert script.stdout_path == "logs/my_job_1-%j.out"


def test_hostile_job_name_is_one_verbatim_directive_and_never_runs(tmp_path: Path) -> None:
    script = render(name=HOSTILE_NAME, command=["echo", "done"])
    assert options(script.text)["job-name"] == HOSTILE_NAME
    (name_line,) = [line for line in script.text.splitlines() if line.startswith("#SBATCH --job-name=")]
    assert "hetjob" not in name_line.lower()  # older sbatch splits the job at that word even inside quotes
    executable_lines = [line for line in script.text.splitlines() if not line.startswith("#")]
    assert not any("pwned" in line or "ünï" in line for line in executable_lines)
    result = run_bash(script.text, tmp_path)
    assert (result.returncode, result.stdout) == (0, "done\n")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("line", "words"),
    [  # recorded from `sbatch -vvvv` (Slurm 22.05): "Found in script, argument ..."
        ('--job-name=a b', ["--job-name=a", "b"]),
        ('--job-name=x#y', ["--job-name=x"]),
        ('--job-name="a|b $(rm -rf /) \\"q\\" \'x\' ünï # hetjob \\\\ end"',
         ["--job-name=a|b $(rm -rf /) \"q\" 'x' ünï # hetjob \\ end"]),
        ('--job-name="it\'s"', ["--job-name=it's"]),
        ('--job-name="tab\there"', ["--job-name=tab\there"]),
        ('--job-name=a\\ b', ["--job-name=a", "b"]),
        ('-J ":x"', ["-J", ":x"]),
        ('--job-name=x hetjob y', ["--job-name=x", "hetjob", "y"]),
    ],
)  # fmt: skip
def test_sbatch_words_match_recorded_sbatch(line: str, words: list[str]) -> None:
    assert sbatch_words(line) == words


@given(st.text(st.characters(exclude_characters="\r\n\0"), min_size=1))
def test_any_single_line_value_reads_back_verbatim(value: str) -> None:
    assert sbatch_words(f"--job-name={sbatch_word(value)} --nodes=1") == [f"--job-name={value}", "--nodes=1"]


def test_unmatched_quote_is_refused_like_sbatch_does() -> None:
    with pytest.raises(ValueError, match="unmatched"):
        sbatch_words("--job-name=it's")


@pytest.mark.cluster
def test_real_sbatch_reads_the_directives_back_verbatim(tmp_path: Path) -> None:
    if shutil.which("sbatch") is None:
        skip_or_fail("sbatch is not installed (scripts/devcluster up installs it)")
    # `-Q` with `-v` makes sbatch stop right after parsing the script, before it contacts any controller.
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "ClusterName=parse\nSlurmctldHost=localhost\nSlurmctldPort=1\nAuthType=auth/none\n"
        "NodeName=localhost CPUs=1\nPartitionName=p Nodes=localhost Default=YES\n"
    )
    script = render(name=HOSTILE_NAME, command="true", work_dir="/tmp/a dir # x")
    (tmp_path / "job.sh").write_text(script.text)
    result = subprocess.run(
        ["sbatch", "-vvvv", "-Q", str(tmp_path / "job.sh")],
        env={**os.environ, "SLURM_CONF": str(conf)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    found = re.findall(r'Found in script, argument "(.*)"$', result.stderr, flags=re.MULTILINE)
    assert f"--job-name={HOSTILE_NAME}" in found, result.stderr
    assert "--chdir=/tmp/a dir # x" in found
    assert f"--output={script.stdout_path}" in found
    assert found == directive_words(script.text)


# --- what bash runs -------------------------------------------------------------------------------------------


def test_env_var_values_reach_the_job_exactly(tmp_path: Path) -> None:
    values = {
        "SPACES": "a b  c",
        "QUOTES": 'it\'s "quoted"',
        "DOLLAR": "$HOME ${X:-y} $(touch pwned)",
        "BACKTICK": "`touch pwned`",
        "NEWLINES": "line1\nline2\n",
        "BACKSLASH": "a\\nb\\",
        "EMPTY": "",
        "UNICODE": "ünï ✓",
        "GLOB": "* ?",
    }
    dump = "import json, os, sys; json.dump({k: os.environ[k] for k in sys.argv[1:]}, sys.stdout)"
    script = render(command=[sys.executable, "-c", dump, *values], environment=Environment(env_vars=values))
    result = run_bash(script.text, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == values
    assert not (tmp_path / "pwned").exists()


def test_list_command_runs_as_argv(tmp_path: Path) -> None:
    script = render(command=["printf", "%s\n", "a b", "$(x)", "`id`", "*", "'q'", "semi;colon"])
    result = run_bash(script.text, tmp_path)
    assert result.stdout.splitlines() == ["a b", "$(x)", "`id`", "*", "'q'", "semi;colon"]


def test_string_command_is_the_users_shell_line_and_keeps_its_exit_code(tmp_path: Path) -> None:
    script = render(command="echo $((1 + 2)) | tr 3 x\nfalse | true\nexit 4")
    result = run_bash(script.text, tmp_path)
    assert (result.stdout, result.returncode) == ("x\n", 4)


def test_a_failing_command_fails_the_job_with_its_own_code(tmp_path: Path) -> None:
    script = render(command=["bash", "-c", "echo partial; exit 7"], environment=Environment(env_vars={"A": "1"}))
    result = run_bash(script.text, tmp_path)
    assert (result.stdout, result.returncode) == ("partial\n", 7)


def test_command_starting_with_directives_is_refused() -> None:
    with pytest.raises(RenderError, match=r"'sneaky'.*#SBATCH"):
        render(name="sneaky", command="#SBATCH --time=1\necho hi")


def test_nul_bytes_are_refused() -> None:
    with pytest.raises(ValidationError, match="NUL"):
        Environment(env_vars={"A": "a\0b"})
    unchecked = Environment.model_construct(env_vars={"A": "a\0b"})  # a definition built without validation
    with pytest.raises(RenderError, match="NUL"):
        render(command="true", environment=unchecked)


def test_log_dir_with_a_slurm_pattern_is_refused() -> None:
    with pytest.raises(RenderError, match="'%' or"):
        render(command="true", log_dir="logs/100%")


FAKE_CONDA = """#!/bin/sh
if [ "$1" = shell.bash ] && [ "$2" = hook ]; then
    echo 'conda() { [ "$1" = activate ] && [ "$2" = "my env" ] && export CONDA_DEFAULT_ENV="$2"; }'
fi
"""


def test_conda_environment_is_activated(tmp_path: Path) -> None:
    executable(tmp_path / "bin" / "conda", FAKE_CONDA)
    script = render(command='echo "[$CONDA_DEFAULT_ENV]"', environment=Environment(conda="my env"))
    result = run_bash(script.text, tmp_path, path=str(tmp_path / "bin"))
    assert (result.returncode, result.stdout) == (0, "[my env]\n"), result.stderr


def test_conda_environment_that_does_not_activate_stops_the_job(tmp_path: Path) -> None:
    executable(tmp_path / "bin" / "conda", FAKE_CONDA)
    script = render(command="echo ran", environment=Environment(conda="other $(touch pwned)"))
    result = run_bash(script.text, tmp_path, path=str(tmp_path / "bin"))
    assert (result.returncode, result.stdout) == (1, "")
    assert "svc: conda could not activate environment other $(touch pwned)" in result.stderr
    assert not (tmp_path / "pwned").exists()


def test_missing_conda_stops_the_job_with_127(tmp_path: Path) -> None:
    script = render(command="echo ran", environment=Environment(conda="base"))
    result = run_bash(script.text, tmp_path, path=str(tmp_path / "empty"))
    assert (result.returncode, result.stdout) == (127, "")
    assert "conda is not on PATH" in result.stderr


def test_venv_is_activated_and_a_missing_one_stops_the_job(tmp_path: Path) -> None:
    (tmp_path / "my venv" / "bin").mkdir(parents=True)
    (tmp_path / "my venv" / "bin" / "activate").write_text("export VENV_MARK=active\n")
    script = render(command='echo "$VENV_MARK"', environment=Environment(venv=str(tmp_path / "my venv")))
    assert run_bash(script.text, tmp_path).stdout == "active\n"
    missing = render(command="echo ran", environment=Environment(venv=str(tmp_path / "none")))
    result = run_bash(missing.text, tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert "no bin/activate" in result.stderr


ARGV_PRINTER = '#!/bin/sh\necho "runtime=${0##*/}"\nprintf \'<%s>\\n\' "$@"\n'


def test_container_runs_list_command_as_argv_in_apptainer(tmp_path: Path) -> None:
    executable(tmp_path / "bin" / "apptainer", ARGV_PRINTER)
    executable(tmp_path / "bin" / "singularity", ARGV_PRINTER)
    script = render(command=["python", "a b.py", "$(x)"], environment=Environment(container="/img/my image.sif"))
    result = run_bash(script.text, tmp_path, path=str(tmp_path / "bin"))
    assert result.stdout.splitlines() == [
        "runtime=apptainer", "<exec>", "</img/my image.sif>", "<python>", "<a b.py>", "<$(x)>",
    ]  # fmt: skip


def test_container_runs_string_command_through_bash_c_and_falls_back_to_singularity(tmp_path: Path) -> None:
    executable(tmp_path / "bin" / "singularity", ARGV_PRINTER)
    script = render(command="echo $HOME && ls", environment=Environment(container="docker://ubuntu:24.04"))
    result = run_bash(script.text, tmp_path, path=str(tmp_path / "bin"))
    assert result.stdout.splitlines() == [
        "runtime=singularity", "<exec>", "<docker://ubuntu:24.04>", "<bash>", "<-c>", "<echo $HOME && ls>",
    ]  # fmt: skip


def test_container_without_a_runtime_stops_the_job_with_127(tmp_path: Path) -> None:
    script = render(command="echo ran", environment=Environment(container="img.sif"))
    result = run_bash(script.text, tmp_path, path=str(tmp_path / "empty"))
    assert (result.returncode, result.stdout) == (127, "")
    assert "neither apptainer nor singularity" in result.stderr


# --- user scripts -----------------------------------------------------------------------------------------------

USER_SCRIPT = """#!/bin/bash
#SBATCH --time=5
#SBATCH -J myname

# a comment between directives and the first command
echo "first command"
#SBATCH --partition=ignored-by-sbatch
"""


def test_user_script_options_are_never_overridden() -> None:
    script = render(
        name="ours",
        script=USER_SCRIPT,
        resources=Resources(time_limit="10", partition="gpu", gpus_per_node=1),
    )
    words = directive_words(script.text)
    assert "--time=5" in words
    assert words[words.index("-J") : words.index("-J") + 2] == ["-J", "myname"]
    added = added_options(script, USER_SCRIPT)
    assert not {"time", "job-name"} & set(added)
    assert (added["partition"], added["gres"]) == ("gpu", "gpu:1")  # after the first command it was no directive
    ours = "".join(line for line in script.text.splitlines(True) if line not in USER_SCRIPT.splitlines(True))
    assert ours.startswith("#SBATCH --output=")
    assert script.text == USER_SCRIPT.replace("#!/bin/bash\n", "#!/bin/bash\n" + ours, 1)  # one block, user's intact
    assert script.stdout_path == "logs/ours-%j.out"


def test_user_script_gets_no_default_resource_directives() -> None:
    found = options(render(script="#!/bin/bash\n#SBATCH --ntasks=8\nsrun hostname\n").text)
    assert not {"nodes", "ntasks-per-node", "cpus-per-task"} & set(found)
    assert options(render(script="#!/bin/bash\nhostname\n", resources=Resources(nodes=2)).text)["nodes"] == "2"


@pytest.mark.parametrize(
    ("directive", "ours"),
    [
        ("--ntasks=8", "ntasks-per-node"),
        ("-n 8", "ntasks-per-node"),
        ("--mem-per-cpu=2G", "mem"),
        ("--gpus-per-task=1", "gres"),
        ("-G 2", "gres"),
        ("--cpus-per-gpu=4", "cpus-per-task"),
        ("--part=debug", "partition"),
        ("-pdebug", "partition"),
        ("--nodefile=hosts.txt", "nodelist"),
        ("-D /elsewhere", "chdir"),
        ("--dependency afterany:1", "dependency"),
    ],
)
def test_user_options_block_the_directives_they_conflict_with(directive: str, ours: str) -> None:
    resources = Resources(ntasks_per_node=2, memory_per_node="8G", gpus_per_node=1, cpus_per_task=2,
                          partition="gpu", nodelist="n1")  # fmt: skip
    user = f"#!/bin/bash\n#SBATCH {directive}\nhostname\n"
    script = render(script=user, resources=resources, work_dir="/w", dependency="afterok:5")
    added = added_options(script, user)
    assert ours not in added
    assert len(added) >= 6  # everything else is still added


def test_user_output_path_is_reported_with_job_id_placeholder() -> None:
    script = render(script="#!/bin/bash\n#SBATCH --output=/tmp/x-%j.log\necho hi\n", work_dir="/w")
    assert (script.stdout_path, script.stderr_path, script.log_dir) == ("/tmp/x-%j.log", "/tmp/x-%j.log", "/tmp")
    assert "error" not in options(script.text)  # Slurm sends stderr to their output file: keep it so
    assert script.log_paths_for("9") == ("/tmp/x-9.log", "/tmp/x-9.log")


def test_user_log_patterns_are_resolved_where_possible() -> None:
    script = render(
        name="ours",
        work_dir="/w",
        script="#!/bin/bash\n#SBATCH -J 'my name' -o out/%x-%j.log\n#SBATCH -e /scratch/%u/%x-%A_%a.err\necho\n",
    )
    assert script.stdout_path == "/w/out/my name-%j.log"
    assert script.stderr_path == "/scratch/%u/%x-%A_%a.err"  # unknowable before the job runs: as written
    assert script.log_dir == "/w/out"
    unknown_dir = render(script="#!/bin/bash\n#SBATCH --output=/scratch/%u/x-%j.out\necho\n")
    assert unknown_dir.log_dir == "/scratch"


def test_user_chdir_is_where_our_relative_logs_land() -> None:
    script = render(name="j", work_dir="/ours", script="#!/bin/bash\n#SBATCH --chdir=/theirs\necho\n")
    assert "chdir" not in added_options(script, "#!/bin/bash\n#SBATCH --chdir=/theirs\necho\n")
    assert (script.log_dir, script.stdout_path) == ("/theirs/logs", "/theirs/logs/j-%j.out")


def test_script_without_shebang_gets_bash() -> None:
    script = render(script="echo hi\n")
    assert script.text.startswith("#!/bin/bash\n#SBATCH --job-name=job\n")
    assert script.text.endswith("\necho hi\n")


def test_script_env_setup_goes_after_the_directive_block_and_takes_effect(tmp_path: Path) -> None:
    user = '#!/usr/bin/env bash\n#SBATCH -J x\n\n#SBATCH --time=1\necho "[$GREETING]"'
    script = render(script=user, environment=Environment(env_vars={"GREETING": "hi there"}))
    assert directive_words(script.text)[-3:] == ["-J", "x", "--time=1"]  # exports did not cut the block short
    assert script.text.endswith("export GREETING='hi there'\necho \"[$GREETING]\"")
    assert run_bash(script.text, tmp_path).stdout == "[hi there]\n"


def test_non_shell_script_gets_directives_but_refuses_env_setup() -> None:
    python = "#!/usr/bin/env python3\n#SBATCH --time=5\nprint('hi')\n"
    script = render(script=python)
    assert script.text.startswith("#!/usr/bin/env python3\n#SBATCH --job-name=job\n")
    with pytest.raises(RenderError, match="python3"):
        render(script=python, environment=Environment(env_vars={"A": "1"}))


def test_script_ignores_container() -> None:
    script = render(script="#!/bin/bash\necho hi\n", environment=Environment(container="img.sif"))
    assert "apptainer" not in script.text


def test_malformed_user_directive_is_a_render_error() -> None:
    with pytest.raises(RenderError, match=r"'bad'.*unmatched"):
        render(name="bad", script="#!/bin/bash\n#SBATCH --comment=it's\necho\n")


# --- template and plugin -------------------------------------------------------------------------------------


def test_template_errors_become_render_errors_naming_the_job() -> None:
    broken = template_environment().from_string("#!/bin/bash\n{{ no_such_value }}\n")
    with pytest.raises(RenderError, match=r"'broken-job'.*no_such_value"):
        render_sbatch(JobDefinition(name="broken-job", command="true"), template=broken)


def test_template_is_sandboxed() -> None:
    unsafe = template_environment().from_string("{{ shebang.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(RenderError, match="unsafe"):
        render_sbatch(JobDefinition(command="true"), template=unsafe)


def test_hook_offers_the_default_renderer() -> None:
    (spec,) = hooks.svc_renderers()
    assert spec.name == "default"
    assert spec.render(JobDefinition(name="via-hook", command="true")).text.startswith("#!/bin/bash\n")
