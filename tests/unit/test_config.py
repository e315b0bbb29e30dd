"""Layered configuration: defaults, layer order, SVC_* overrides, errors that name file and field, safe writes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.errors import ConfigError, ConflictError
from svc_host.settings.config import (
    config_layers,
    config_paths,
    init_project_config,
    load_config,
    read_project_config,
    reset_user_config,
    save_user_config,
    trust_project,
    untrust_project,
    write_project_config,
)
from svc_host.settings.paths import SvcPaths

SPEC_DEFAULTS = {
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


@pytest.fixture(autouse=True)
def paths(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SvcPaths:
    """The isolated setup of tests/conftest.py, working in a project directory."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return SvcPaths.from_env()


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def write_trusted(paths: SvcPaths, name: str, data: object) -> None:
    """A project file of the working directory that the user has trusted."""
    write(paths.project_dir / name, data)
    trust_project(paths, paths.project_dir)


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_fresh_configuration_has_the_spec_defaults(paths: SvcPaths) -> None:
    assert load_config(paths, env=os.environ).model_dump(mode="json") == SPEC_DEFAULTS


def test_layers_apply_system_then_user_then_project_then_env(paths: SvcPaths) -> None:
    write(paths.system_config, {"resources": {"partition": "sys", "nodes": 2, "gpus_per_node": 8}, "log_dir": "s"})
    write(paths.user_config, {"resources": {"partition": "user", "nodes": 3}})
    write_trusted(paths, ".svc.json", {"resources": {"partition": "proj"}})
    env = {"SVC_LOG_DIR": "from-env"}

    config = load_config(paths, env=env)

    assert config.resources.partition == "proj"
    assert config.resources.nodes == 3  # user beats system; project did not touch it
    assert config.resources.gpus_per_node == 8  # only the system file set it
    assert config.log_dir == "from-env"


def test_env_overrides_nested_keys_and_ignores_non_config_variables(paths: SvcPaths) -> None:
    write_trusted(paths, ".svc.json", {"resources": {"partition": "proj", "nodes": 2}})
    env = {
        "SVC_RESOURCES__PARTITION": "gpu",
        "SVC_ENVIRONMENT__ENV_VARS": '{"HF_HOME": "/data/hf"}',
        "SVC_SSH_HOSTNAME": "login.example.org",
        "SVC_SSH_PORT": "2222",
        "SVC_DATABASE_URL": "sqlite:///x.db",
        "SVC_TRANSPORT": "local",
        "SVC_DISABLE_PLUGINS": "rsync",
        "SVC_PLUGINS_STRICT": "1",
        "SVC_SYSTEM_CONFIG": "/nowhere",
        "SVC_WORK_DIR": "",
    }

    config = load_config(paths, env=env)

    assert config.resources.partition == "gpu"
    assert config.resources.nodes == 2
    assert config.environment.env_vars == {"HF_HOME": "/data/hf"}
    assert config.work_dir is None  # empty means unset


def test_env_none_ignores_the_environment(paths: SvcPaths) -> None:
    assert load_config(paths, env=None).resources.partition is None
    assert load_config(paths, env={"SVC_RESOURCES__PARTITION": "gpu"}).resources.partition == "gpu"


def test_bad_env_value_names_the_variable(paths: SvcPaths) -> None:
    with pytest.raises(ConfigError, match=r"SVC_RESOURCES__NODES: Input should be a valid integer"):
        load_config(paths, env={"SVC_RESOURCES__NODES": "many"})
    with pytest.raises(ConfigError, match=r"SVC_RESOURCES__PARTITON: Extra inputs are not permitted"):
        load_config(paths, env={"SVC_RESOURCES__PARTITON": "gpu"})


def test_project_falls_back_to_svc_json_and_dot_file_wins(paths: SvcPaths) -> None:
    write_trusted(paths, "svc.json", {"log_dir": "plain"})
    assert load_config(paths, env=None).log_dir == "plain"
    write_trusted(paths, ".svc.json", {"log_dir": "dotted"})
    assert load_config(paths, env=None).log_dir == "dotted"


def test_env_vars_merge_per_variable_across_layers(paths: SvcPaths) -> None:
    write(paths.system_config, {"environment": {"env_vars": {"A": "sys", "B": "sys"}}})
    write(paths.user_config, {"environment": {"env_vars": {"B": "user"}}})
    assert load_config(paths, env=None).environment.env_vars == {"A": "sys", "B": "user"}


def test_invalid_file_names_file_and_field(paths: SvcPaths) -> None:
    write(paths.user_config, {"resources": {"nodes": 0}})
    with pytest.raises(ConfigError) as caught:
        load_config(paths, env=None)
    assert str(caught.value) == f"{paths.user_config}: resources.nodes: Input should be greater than or equal to 1"


def test_unknown_key_in_file_is_an_error_not_ignored(paths: SvcPaths) -> None:
    write(paths.system_config, {"resources": {"gpus": 4}})
    with pytest.raises(ConfigError, match=rf"{paths.system_config}: resources.gpus: Extra inputs are not permitted"):
        load_config(paths, env=None)


def test_unparsable_json_names_file_and_line(paths: SvcPaths) -> None:
    paths.user_config.parent.mkdir(parents=True)
    paths.user_config.write_text('{\n  "log_dir": "x",\n  oops\n}\n')
    with pytest.raises(ConfigError, match=rf"{paths.user_config}: invalid JSON at line 3"):
        load_config(paths, env=None)


def test_save_merges_into_user_file_atomically_with_mode_0600(paths: SvcPaths) -> None:
    write(paths.user_config, {"resources": {"nodes": 2}})

    merged = save_user_config(paths, {"resources": {"partition": "gpu"}})

    assert merged.resources.partition == "gpu"
    assert merged.resources.nodes == 2
    assert json.loads(paths.user_config.read_text()) == {"resources": {"nodes": 2, "partition": "gpu"}}
    assert stat.S_IMODE(paths.user_config.stat().st_mode) == 0o600
    assert leftovers(paths.user_config.parent) == []


def test_save_replaces_env_vars_so_a_variable_can_be_removed(paths: SvcPaths) -> None:
    save_user_config(paths, {"environment": {"env_vars": {"A": "1", "B": "2"}}})
    merged = save_user_config(paths, {"environment": {"env_vars": {"B": "2"}}})
    assert merged.environment.env_vars == {"B": "2"}


def test_save_rejects_invalid_values_and_leaves_the_file_untouched(paths: SvcPaths) -> None:
    write(paths.user_config, {"resources": {"nodes": 2}})
    before = paths.user_config.read_bytes()
    with pytest.raises(ConfigError, match=r"^resources.gpus_per_node: Input should be greater than or equal to 0$"):
        save_user_config(paths, {"resources": {"gpus_per_node": -1}})
    with pytest.raises(ConfigError, match=r"colour: Extra inputs are not permitted"):
        save_user_config(paths, {"colour": "blue"})
    assert paths.user_config.read_bytes() == before


def test_save_refuses_to_build_on_an_invalid_user_file(paths: SvcPaths) -> None:
    write(paths.user_config, {"resources": {"nodes": 0}})
    before = paths.user_config.read_bytes()
    with pytest.raises(ConfigError, match=rf"{paths.user_config}: resources.nodes"):
        save_user_config(paths, {"log_dir": "out"})
    assert paths.user_config.read_bytes() == before


def test_reset_writes_a_full_default_file(paths: SvcPaths) -> None:
    write(paths.user_config, {"resources": {"partition": "gpu"}, "log_dir": "x"})
    write(paths.system_config, {"resources": {"partition": "sys"}})

    config = reset_user_config(paths)

    assert config.model_dump(mode="json") == SPEC_DEFAULTS
    assert json.loads(paths.user_config.read_text()) == SPEC_DEFAULTS
    assert stat.S_IMODE(paths.user_config.stat().st_mode) == 0o600


def test_config_paths_lists_system_user_and_both_project_names(paths: SvcPaths) -> None:
    write(paths.user_config, {})
    assert config_paths(paths) == [
        {"path": str(paths.system_config), "exists": False, "source": "system"},
        {"path": str(paths.user_config), "exists": True, "source": "user"},
        {"path": str(paths.project_dir / ".svc.json"), "exists": False, "source": "project"},
        {"path": str(paths.project_dir / "svc.json"), "exists": False, "source": "project"},
    ]


def test_project_config_read_write_init(paths: SvcPaths, tmp_path: Path) -> None:
    directory = tmp_path / "code"
    directory.mkdir()
    assert read_project_config(directory).exists is False

    created = init_project_config(directory)
    assert created.path == directory / ".svc.json"
    assert created.config["resources"]["gpus_per_node"] == 1
    with pytest.raises(ConflictError, match=r"\.svc\.json already exists"):
        init_project_config(directory)

    written = write_project_config(directory, {"resources": {"partition": "a100"}})
    assert json.loads(written.path.read_text()) == {"resources": {"partition": "a100"}}
    assert read_project_config(directory).config == {"resources": {"partition": "a100"}}
    assert leftovers(directory) == []

    with pytest.raises(ConfigError, match=r"resources.time_limit"):
        write_project_config(directory, {"resources": {"time_limit": "soon"}})
    assert read_project_config(directory).config == {"resources": {"partition": "a100"}}


def test_project_init_refuses_when_svc_json_exists(tmp_path: Path) -> None:
    write(tmp_path / "svc.json", {})
    with pytest.raises(ConflictError, match=r"svc\.json already exists"):
        init_project_config(tmp_path)
    assert not (tmp_path / ".svc.json").exists()


# -- the project file's sync excludes --------------------------------------------------------------------------


def test_project_exclude_is_kept_beside_the_job_defaults(paths: SvcPaths, tmp_path: Path) -> None:
    directory = tmp_path / "code"
    directory.mkdir()
    written = write_project_config(directory, {"exclude": ["data/", "*.ckpt"], "log_dir": "out"})
    assert json.loads(written.path.read_text()) == {"log_dir": "out", "exclude": ["data/", "*.ckpt"]}
    assert read_project_config(directory).config == {"log_dir": "out", "exclude": ["data/", "*.ckpt"]}
    # the working directory's project file may hold it too: it is no job default, so the merged config ignores it
    write_trusted(paths, ".svc.json", {"exclude": ["data/"], "log_dir": "out"})
    assert load_config(paths, env=None).model_dump(mode="json") == {**SPEC_DEFAULTS, "log_dir": "out"}


@pytest.mark.parametrize(
    ("exclude", "message"),
    [
        ("data/", "exclude: must be a list of rsync patterns"),
        ([1], "exclude: must be a list of rsync patterns"),
        (["a\nb"], "contains a line break or NUL"),
        (["nul\0"], "contains a line break or NUL"),
        ([""], "an exclude pattern is empty"),
        (["x" * 1025], "longer than 1024 characters"),
        (["p"] * 257, "at most 256 exclude patterns"),
    ],
)
def test_bad_project_excludes_are_refused_and_change_nothing(
    paths: SvcPaths, tmp_path: Path, exclude: object, message: str
) -> None:
    directory = tmp_path / "code"
    directory.mkdir()
    write_project_config(directory, {"exclude": ["ok/"]})
    with pytest.raises(ConfigError, match=message):
        write_project_config(directory, {"exclude": exclude})
    assert read_project_config(directory).config == {"exclude": ["ok/"]}
    write(directory / ".svc.json", {"exclude": exclude})
    with pytest.raises(ConfigError, match=r"\.svc\.json: exclude: ") as raised:
        read_project_config(directory)
    assert message.removeprefix("exclude: ") in str(raised.value)


# -- concurrent writers of the user file -----------------------------------------------------------------------

SAVE_MANY = """
import sys
from svc_host.settings.config import save_user_config
from svc_host.settings.paths import SvcPaths

paths = SvcPaths.from_env()
for index in range(1, 31):
    save_user_config(paths, {"resources": {sys.argv[1]: sys.argv[2].format(index)}})
"""


def test_processes_saving_the_user_config_at_once_lose_nothing(paths: SvcPaths) -> None:
    """Each writer sets its own field 30 times: a read-modify-write racing another would bring back an old value."""
    writers = {"partition": "p{}", "nodelist": "node{}", "memory_per_node": "{}G", "time_limit": "{}:00:00"}
    procs = [subprocess.Popen([sys.executable, "-c", SAVE_MANY, key, form]) for key, form in writers.items()]
    assert [proc.wait(timeout=120) for proc in procs] == [0] * len(writers)
    resources = load_config(paths, env=None).resources.model_dump()
    assert {key: resources[key] for key in writers} == {key: form.format(30) for key, form in writers.items()}
    assert sorted(p.name for p in paths.user_config.parent.iterdir()) == ["config.json", "config.json.lock"]
    assert stat.S_IMODE((paths.user_config.parent / "config.json.lock").stat().st_mode) == 0o600


# -- trust of the working directory's project file ---------------------------------------------------------


def test_an_untrusted_project_file_is_ignored_with_a_notice(paths: SvcPaths, caplog: pytest.LogCaptureFixture) -> None:
    hostile = {
        "notifications": {"chat_webhook_url": "https://evil.example/hook"},
        "log_dir": "/tmp/elsewhere",
        "environment": {"env_vars": {"BASH_ENV": "/tmp/evil.sh"}},
    }
    write(paths.project_dir / ".svc.json", hostile)
    with caplog.at_level("WARNING", logger="svc.config"):
        config = load_config(paths, env=None)
        load_config(paths, env=None)
    assert config.model_dump(mode="json") == SPEC_DEFAULTS
    notices = [r.getMessage() for r in caplog.records if r.name == "svc.config"]
    assert len(notices) == 1  # once per process and content, not on every read
    assert "svc config trust" in notices[0]
    assert str(paths.project_dir / ".svc.json") in notices[0]
    layers = config_layers(paths, env=None)
    assert [(layer.source, layer.data, bool(layer.ignored)) for layer in layers] == [("project", {}, True)]


def test_trust_is_for_the_content_it_saw(paths: SvcPaths) -> None:
    write(paths.project_dir / ".svc.json", {"log_dir": "reviewed"})
    trust_project(paths, paths.project_dir)
    assert load_config(paths, env=None).log_dir == "reviewed"
    store = paths.user_config_dir / "trusted-projects.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    write(paths.project_dir / ".svc.json", {"log_dir": "changed-after-review"})
    assert load_config(paths, env=None).log_dir == "logs"  # changed content needs trust again
    trust_project(paths, paths.project_dir)
    assert load_config(paths, env=None).log_dir == "changed-after-review"
    assert untrust_project(paths, paths.project_dir) == [str(paths.project_dir.resolve() / ".svc.json")]
    assert load_config(paths, env=None).log_dir == "logs"


def test_allowances_never_come_from_a_project_file(paths: SvcPaths) -> None:
    write(paths.project_dir / ".svc.json", {"plugins": {"chat": {"allow_http_hosts": ["10.0.0.1"]}}})
    with pytest.raises(ConfigError, match=r"plugins.chat.allow_http_hosts may not be set in a project config"):
        trust_project(paths, paths.project_dir)
    assert not (paths.user_config_dir / "trusted-projects.json").exists()


def test_trust_without_a_project_file_is_a_clear_error(paths: SvcPaths) -> None:
    with pytest.raises(ConfigError, match=r"has no project config \(.svc.json or svc.json\)"):
        trust_project(paths, paths.project_dir)


# -- config files of any type and size ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "huge"])
def test_config_files_must_be_small_regular_files(paths: SvcPaths, kind: str) -> None:
    path = paths.user_config
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text(json.dumps({"log_dir": "x" * (2 << 20)}))
    expected = "larger than 1048576 bytes" if kind == "huge" else "not a regular file"
    with pytest.raises(ConfigError, match=expected):
        load_config(paths, env=None)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_project_file_that_is_no_regular_file_is_skipped_not_a_hang(paths: SvcPaths, kind: str) -> None:
    path = paths.project_dir / ".svc.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    assert load_config(paths, env=None).log_dir == "logs"  # skipped with a notice (issue 26, N17)
    (ignored,) = [layer for layer in config_layers(paths, env=None) if layer.source == "project"]
    assert "not a regular file" in (ignored.ignored or "")


def settle(path: Path) -> None:
    """Date ``path`` an hour back: old enough for its merged configuration to be kept (settings/file_memo.py)."""
    hour_ago = path.stat().st_mtime - 3600
    os.utime(path, (hour_ago, hour_ago))


def test_a_kept_configuration_follows_every_change_of_its_files_and_variables(paths: SvcPaths) -> None:
    write(paths.user_config, {"log_dir": "first"})
    settle(paths.user_config)
    assert load_config(paths, env={}).log_dir == "first"
    assert load_config(paths, env={}).log_dir == "first"  # kept

    with paths.user_config.open("r+") as edited:  # an editor writing in place: same inode, same size
        edited.write(json.dumps({"log_dir": "other"}))
    assert load_config(paths, env={}).log_dir == "other"

    write(paths.project_dir / "svc.json", {"log_dir": "project"})
    settle(paths.project_dir / "svc.json")
    assert load_config(paths, env={}).log_dir == "other"  # not trusted yet
    trust_project(paths, paths.project_dir)
    assert load_config(paths, env={}).log_dir == "project"
    assert load_config(paths, env={"SVC_LOG_DIR": "variable"}).log_dir == "variable"
    assert load_config(paths, env={}).log_dir == "project"

    untrust_project(paths, paths.project_dir)
    assert load_config(paths, env={}).log_dir == "other"
    trust_project(paths, paths.project_dir)
    (paths.project_dir / "svc.json").unlink()
    assert load_config(paths, env={}).log_dir == "other"


def test_each_caller_gets_a_configuration_of_its_own(paths: SvcPaths) -> None:
    write(paths.user_config, {"log_dir": "mine"})
    settle(paths.user_config)
    load_config(paths, env={}).log_dir = "changed by a caller"
    assert load_config(paths, env={}).log_dir == "mine"
