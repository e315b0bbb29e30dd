"""``svc config`` and ``svc profile`` as a user runs them: real processes in an isolated HOME."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def env(home: Path, tmp_path: Path) -> dict[str, str]:
    """The isolated environment of tests/conftest.py for a child process, working in a project directory."""
    (tmp_path / "project").mkdir()
    return {**os.environ, "COLUMNS": "250"}  # rich wraps table cells to the terminal width


@pytest.fixture
def user_config(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "svc" / "config.json"


@pytest.fixture
def profiles_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "svc" / "profiles.json"


def run(env: dict[str, str], *args: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**env, **(extra or {})},
        cwd=Path(env["HOME"]).parent / "project",
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_show_json_is_the_default_configuration(env: dict[str, str]) -> None:
    result = run(env, "config", "show", "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["resources"]["nodes"] == 1
    assert shown["log_dir"] == "logs"
    assert shown["environment"]["env_vars"] == {}


def test_set_writes_the_user_file_and_show_reflects_it(env: dict[str, str], user_config: Path) -> None:
    assert run(env, "config", "set", "resources.partition", "gpu").returncode == 0
    assert run(env, "config", "set", "resources.gpus_per_node", "4").returncode == 0
    secret = run(env, "config", "set", "environment.env_vars.HF_HOME", "/data/hf")
    assert secret.returncode == 0
    assert "/data/hf" not in secret.stdout + secret.stderr

    assert json.loads(user_config.read_text()) == {
        "resources": {"partition": "gpu", "gpus_per_node": 4},
        "environment": {"env_vars": {"HF_HOME": "/data/hf"}},
    }
    assert stat.S_IMODE(user_config.stat().st_mode) == 0o600
    shown = json.loads(run(env, "config", "show", "--json").stdout)
    assert shown["resources"]["partition"] == "gpu"
    assert shown["resources"]["gpus_per_node"] == 4
    assert shown["environment"]["env_vars"] == {"HF_HOME": "<redacted>"}
    table = run(env, "config", "show").stdout
    assert "resources.partition" in table
    assert "gpu" in table
    assert "/data/hf" not in table

    assert run(env, "config", "set", "resources.partition", "null").returncode == 0
    assert json.loads(run(env, "config", "show", "--json").stdout)["resources"]["partition"] is None


def test_set_notes_when_the_environment_overrides(env: dict[str, str]) -> None:
    result = run(env, "config", "set", "log_dir", "out", extra={"SVC_LOG_DIR": "elsewhere"})
    assert result.returncode == 0
    assert "overrides log_dir; in effect: 'elsewhere'" in result.stderr


def test_set_bad_value_is_one_line_exit_1(env: dict[str, str], user_config: Path) -> None:
    result = run(env, "config", "set", "resources.nodes", "0")
    assert result.returncode == 1
    assert one_line_error(result) == "error: resources.nodes: Input should be greater than or equal to 1"
    assert not user_config.exists()


def test_set_unknown_key_is_one_line_exit_2(env: dict[str, str]) -> None:
    result = run(env, "config", "set", "resources.partiton", "gpu")
    assert result.returncode == 2
    assert one_line_error(result).startswith("Error: unknown configuration key 'resources.partiton'; choose one of:")


def test_invalid_user_file_is_one_line_naming_file_and_field(env: dict[str, str], user_config: Path) -> None:
    user_config.parent.mkdir(parents=True)
    user_config.write_text(json.dumps({"resources": {"nodes": "many"}}))
    result = run(env, "config", "show")
    assert result.returncode == 1
    assert one_line_error(result) == f"error: {user_config}: resources.nodes: Input should be a valid integer, " + (
        "unable to parse string as an integer"
    )
    assert json.loads(user_config.read_text()) == {"resources": {"nodes": "many"}}


def test_paths_and_reset(env: dict[str, str], user_config: Path) -> None:
    run(env, "config", "set", "log_dir", "out")
    listed = json.loads(run(env, "config", "paths", "--json").stdout)
    assert [(e["source"], e["exists"]) for e in listed] == [
        ("system", False),
        ("user", True),
        ("project", False),
        ("project", False),
    ]
    assert listed[1]["path"] == str(user_config)

    result = run(env, "config", "reset", "--yes")
    assert result.returncode == 0, result.stderr
    assert json.loads(user_config.read_text())["log_dir"] == "logs"
    assert json.loads(user_config.read_text())["resources"]["nodes"] == 1


def test_profile_lifecycle(env: dict[str, str], profiles_file: Path) -> None:
    project = Path(env["HOME"]) / "code"
    project.mkdir()
    added = run(env, "profile", "add", "gpu", "--hostname", "login.example.org", "--username", "alice", "--key",
                "~/.ssh/id_ed25519", "--port", "2222")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert run(env, "profile", "use", "gpu").returncode == 0
    mounted = run(env, "profile", "mount", "add", "gpu", "code", "~/code", "/scratch/alice/code")
    assert mounted.returncode == 0, mounted.stderr

    rows = json.loads(run(env, "profile", "list", "--json").stdout)
    assert [(r["name"], r["is_current"], r["port"], r["key_filename"]) for r in rows] == [
        ("gpu", True, 2222, "~/.ssh/id_ed25519")
    ]
    assert rows[0]["mounts"] == [
        {"name": "code", "local": str(project.resolve()), "remote": "/scratch/alice/code", "exclude": []}
    ]
    assert stat.S_IMODE(profiles_file.stat().st_mode) == 0o600
    assert "alice@login.example.org:2222" in run(env, "profile", "list").stdout

    assert run(env, "profile", "mount", "remove", "gpu", "code").returncode == 0
    assert json.loads(run(env, "profile", "list", "--json").stdout)[0]["mounts"] == []
    assert run(env, "profile", "remove", "gpu").returncode == 0
    assert json.loads(run(env, "profile", "list", "--json").stdout) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("profile", "add", "Local", "--hostname", "h"), "error: invalid profile name 'Local' (use lowercase)"),
        (("profile", "add", "local", "--hostname", "h"), "error: profile name 'local' is reserved"),
        (("profile", "add", "gpu"), "error: profile 'gpu' needs a hostname"),
        (("profile", "add", "gpu", "--hostname", "h", "--port", "0"), "Error: port: Input should be greater than"),
        (("profile", "use", "nope"), "error: SSH profile 'nope' not found; known profiles: none"),
        (("profile", "remove", "nope"), "error: SSH profile 'nope' not found"),
        (("profile", "mount", "add", "nope", "m", "/tmp", "/r"), "error: SSH profile 'nope' not found"),
    ],
)
def test_profile_errors_are_one_line(env: dict[str, str], args: tuple[str, ...], message: str) -> None:
    result = run(env, *args)
    assert result.returncode in (1, 2)
    assert one_line_error(result).startswith(message)


@pytest.mark.parametrize(
    ("local", "message"),
    [("/", "is the filesystem root"), ("~", "is (or contains) the home directory"), ("~/nope", "not an existing")],
)
def test_unsafe_mount_roots_are_refused(env: dict[str, str], profiles_file: Path, local: str, message: str) -> None:
    assert run(env, "profile", "add", "gpu", "--hostname", "h").returncode == 0
    result = run(env, "profile", "mount", "add", "gpu", "m", local, "/r")
    assert result.returncode == 1
    assert message in one_line_error(result)
    assert json.loads(profiles_file.read_text())["profiles"]["gpu"]["mounts"] == []


@pytest.mark.parametrize("remote", ["~", "/", "/home/alice", "$HOME", "code/../.."])
def test_mount_remotes_a_mirror_could_wipe_a_home_from_are_refused(
    env: dict[str, str], profiles_file: Path, remote: str
) -> None:
    project = Path(env["HOME"]) / "code"
    project.mkdir()
    assert run(env, "profile", "add", "gpu", "--hostname", "h").returncode == 0
    result = run(env, "profile", "mount", "add", "gpu", "m", str(project), remote)
    assert result.returncode == 2
    assert one_line_error(result).startswith("Error: remote: ")
    assert json.loads(profiles_file.read_text())["profiles"]["gpu"]["mounts"] == []


def test_a_profiles_file_with_a_hostile_env_key_is_one_line_naming_the_file(
    env: dict[str, str], profiles_file: Path
) -> None:
    profiles_file.parent.mkdir(parents=True, exist_ok=True)
    profiles_file.write_text(
        json.dumps({"profiles": {"gpu": {"hostname": "h", "env_vars": {"-Secho INJECTED #": ""}}}})
    )
    result = run(env, "profile", "list")
    assert result.returncode == 1
    assert one_line_error(result).startswith(f"error: {profiles_file}: profiles.gpu.env_vars: ")


def test_plugin_settings_are_shown_set_and_refused_naming_the_plugin_and_field(
    env: dict[str, str], user_config: Path
) -> None:
    shown = json.loads(run(env, "config", "show", "--json").stdout)
    assert shown["plugins"]["chat"]["retry_seconds"] == 5.0  # the chat plugin's defaults, filled in
    assert "plugins.chat.format" in run(env, "config", "show").stdout
    assert run(env, "config", "set", "plugins.chat.format", "teams").returncode == 0
    assert run(env, "config", "set", "plugins.chat.allow_http_hosts", '["hooks.lan"]').returncode == 0
    saved = user_config.read_text()
    assert json.loads(saved)["plugins"] == {"chat": {"format": "teams", "allow_http_hosts": ["hooks.lan"]}}
    refused = run(env, "config", "set", "plugins.chat.retry_seconds", "0")
    assert refused.returncode != 0
    assert one_line_error(refused) == (
        "error: plugin 'chat' settings (plugins.chat): retry_seconds: Input should be greater than 0"
    )
    assert user_config.read_text() == saved


def test_the_renderer_is_a_setting_refused_when_unknown(env: dict[str, str], user_config: Path) -> None:
    refused = run(env, "config", "set", "rendering.renderer", "nope")
    assert refused.returncode != 0
    error = one_line_error(refused)
    assert error.startswith("error: rendering.renderer: unknown renderer 'nope'; choose one of: default")
    assert "site" in error  # the example site's renderer is on offer too
    assert not user_config.exists()
    assert run(env, "config", "set", "rendering.renderer", "site").returncode == 0
    assert json.loads(run(env, "config", "show", "--json").stdout)["rendering"] == {"renderer": "site"}


def test_concurrent_sets_of_different_variables_all_land(env: dict[str, str], user_config: Path) -> None:
    """Each `set environment.env_vars.NAME` reads the stored variables under the writers' lock, so eight shells
    setting eight variables at once lose none of them."""
    names = [f"VAR_{i}" for i in range(8)]
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "svc_host", "config", "set", f"environment.env_vars.{name}", name.lower()],
            env=env,
            cwd=Path(env["HOME"]).parent / "project",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name in names
    ]
    for child in children:
        _, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    assert json.loads(user_config.read_text())["environment"]["env_vars"] == {name: name.lower() for name in names}


def test_a_project_config_is_used_only_once_trusted(env: dict[str, str]) -> None:
    project = Path(env["HOME"]).parent / "project"
    (project / ".svc.json").write_text(json.dumps({"log_dir": "from-the-repo"}))
    ignored = run(env, "config", "show", "--json")
    assert ignored.returncode == 0, ignored.stderr
    assert json.loads(ignored.stdout)["log_dir"] == "logs"
    notice = one_line_error(ignored)
    assert f"ignoring project config {project / '.svc.json'}" in notice
    assert f"svc config trust {project}" in notice

    trusted = run(env, "config", "trust")
    assert trusted.returncode == 0, trusted.stderr
    shown = run(env, "config", "show", "--json")
    assert (json.loads(shown.stdout)["log_dir"], shown.stderr) == ("from-the-repo", "")

    (project / ".svc.json").write_text(json.dumps({"log_dir": "changed"}))
    assert json.loads(run(env, "config", "show", "--json").stdout)["log_dir"] == "logs"
    untrusted = run(env, "config", "untrust", str(project))
    assert untrusted.returncode == 0
    assert "no longer trusted" in untrusted.stdout


def test_a_fifo_project_config_is_one_line_not_a_hang(env: dict[str, str]) -> None:
    """Untrusted, it is skipped with a notice (issue 26, N17); trusting it is refused in one line."""
    os.mkfifo(Path(env["HOME"]).parent / "project" / ".svc.json")
    result = run(env, "config", "show")
    assert result.returncode == 0, result.stderr
    assert "not a regular file" in one_line_error(result)
    trusted = run(env, "config", "trust")
    assert trusted.returncode == 1
    assert "not a regular file" in one_line_error(trusted)
