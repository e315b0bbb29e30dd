"""``ProfileStore``: persisted SSH profiles and mounts, name and mount rules, env selection, safe writes."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.errors import ConfigError, ConflictError, NotFoundError
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import UNKNOWN_HOST_REFUSED, ProfileStore, refuse_unknown_host


@pytest.fixture
def store() -> ProfileStore:
    return ProfileStore(SvcPaths.from_env().profiles_file)


@pytest.fixture
def project(home: Path) -> Path:
    directory = home / "code" / "project"
    directory.mkdir(parents=True)
    return directory


def cluster(**fields: object) -> SSHProfile:
    return SSHProfile.model_validate({"hostname": "login.example.org", "username": "alice", **fields})


def test_create_persists_with_mode_0600_and_no_temp_files(store: ProfileStore) -> None:
    store.create("gpu", cluster(key_filename="~/.ssh/id_ed25519", port=2222))

    assert store.get("gpu").port == 2222
    assert store.get("gpu").key_filename == "~/.ssh/id_ed25519"  # stored as given, expanded when used
    on_disk = json.loads(store.path.read_text())
    assert on_disk["current"] is None
    assert on_disk["profiles"]["gpu"]["hostname"] == "login.example.org"
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["profiles.json", "profiles.json.lock"]


def test_create_refuses_an_existing_name(store: ProfileStore) -> None:
    store.create("gpu", cluster())
    with pytest.raises(ConflictError, match="SSH profile 'gpu' already exists"):
        store.create("gpu", cluster(hostname="other"))
    assert store.get("gpu").hostname == "login.example.org"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("local", "'local' is reserved for the local scheduler"),
        ("GPU", "invalid profile name 'GPU' (use lowercase)"),
        ("my cluster", "invalid profile name 'my cluster'"),
        ("", "invalid profile name ''"),
    ],
)
def test_bad_profile_names_are_rejected(store: ProfileStore, name: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        store.create(name, cluster())
    assert not store.path.exists()


def test_a_profile_needs_a_hostname_or_an_ssh_alias(store: ProfileStore) -> None:
    with pytest.raises(ConfigError, match="needs a hostname"):
        store.create("gpu", SSHProfile(username="alice"))
    assert store.create("alias", SSHProfile(ssh_host="mycluster")).ssh_host == "mycluster"


def test_update_applies_only_the_listed_fields(store: ProfileStore, project: Path) -> None:
    store.create("gpu", cluster())
    store.add_mount("gpu", Mount(name="code", local=str(project), remote="/scratch/alice/code"))

    updated = store.update(
        "gpu", {"hostname": "new.example.org", "env_vars": {"A": "1"}, "mounts": [], "accept_unknown_host": True}
    )

    assert updated.hostname == "new.example.org"
    assert updated.env_vars == {"A": "1"}
    assert [m.name for m in updated.mounts] == ["code"]
    assert updated.accept_unknown_host is False
    assert store.get("gpu") == updated


def test_update_validates_and_names_the_profile(store: ProfileStore) -> None:
    store.create("gpu", cluster())
    with pytest.raises(ConfigError, match=r"profile 'gpu': port: Input should be less than or equal to 65535"):
        store.update("gpu", {"port": 70000})
    with pytest.raises(NotFoundError, match=r"SSH profile 'nope' not found; known profiles: 'gpu'"):
        store.update("nope", {"port": 22})
    assert store.get("gpu").port == 22


def test_delete_removes_mounts_and_clears_current(store: ProfileStore, project: Path) -> None:
    store.create("gpu", cluster())
    store.add_mount("gpu", Mount(name="code", local=str(project), remote="/r"))
    store.activate("gpu")

    store.delete("gpu")

    assert store.list() == {}
    assert store.current() is None
    store.create("gpu", cluster())
    assert store.get("gpu").mounts == []
    with pytest.raises(NotFoundError, match="'nope' not found"):
        store.delete("nope")


def test_activate_sets_current_and_unknown_is_not_found(store: ProfileStore) -> None:
    store.create("a", cluster())
    store.create("b", cluster())
    store.activate("b")
    assert store.current() == "b"
    assert store.host_config(env=None).current_profile == "b"
    with pytest.raises(NotFoundError, match="SSH profile 'c' not found; known profiles: 'a', 'b'"):
        store.activate("c")
    assert store.current() == "b"


def test_mount_local_is_stored_resolved(store: ProfileStore, home: Path, project: Path) -> None:
    link = home / "link"
    link.symlink_to(project)
    store.create("gpu", cluster())

    via_tilde = store.add_mount("gpu", Mount(name="code", local="~/code/project", remote="/r/code"))
    via_link = store.add_mount("gpu", Mount(name="linked", local=str(link), remote="/r/linked"))

    assert via_tilde.local == str(project.resolve())
    assert via_link.local == str(project.resolve())
    assert [m.local for m in store.get("gpu").mounts] == [str(project.resolve())] * 2


@pytest.mark.parametrize(
    ("local", "message"),
    [
        ("/", "is the filesystem root"),
        ("~", "is (or contains) the home directory"),
        ("HOME_PARENT", "is (or contains) the home directory"),
        ("~/missing", "is not an existing directory"),
        ("relative/dir", "must be absolute"),
    ],
)
def test_unsafe_or_missing_mount_roots_are_refused(store: ProfileStore, home: Path, local: str, message: str) -> None:
    (home / "relative" / "dir").mkdir(parents=True)
    (home / "afile").write_text("x")
    store.create("gpu", cluster())
    local = str(home.parent) if local == "HOME_PARENT" else local

    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        store.add_mount("gpu", Mount(name="m", local=local, remote="/r"))

    assert store.get("gpu").mounts == []


def test_a_file_is_not_a_mount_root(store: ProfileStore, home: Path) -> None:
    (home / "afile").write_text("x")
    store.create("gpu", cluster())
    with pytest.raises(ConfigError, match="is not an existing directory"):
        store.add_mount("gpu", Mount(name="m", local=str(home / "afile"), remote="/r"))


def test_mount_names_are_unique_and_removal_needs_a_known_name(store: ProfileStore, project: Path) -> None:
    store.create("gpu", cluster())
    store.add_mount("gpu", Mount(name="code", local=str(project), remote="/r"))
    with pytest.raises(ConflictError, match="mount 'code' already exists in profile 'gpu'"):
        store.add_mount("gpu", Mount(name="code", local=str(project), remote="/other"))
    with pytest.raises(NotFoundError, match="mount 'data' not found in profile 'gpu'"):
        store.remove_mount("gpu", "data")
    with pytest.raises(NotFoundError, match="SSH profile 'cpu' not found"):
        store.add_mount("cpu", Mount(name="code", local=str(project), remote="/r"))

    store.remove_mount("gpu", "code")
    assert store.get("gpu").mounts == []


def test_invalid_file_names_file_and_field_and_is_not_reset(store: ProfileStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text(json.dumps({"current": None, "profiles": {"gpu": {"hostname": "h", "port": "ssh"}}}))
    before = store.path.read_bytes()

    with pytest.raises(ConfigError, match=rf"^{store.path}: profiles.gpu.port: Input should be a valid integer"):
        store.list()
    with pytest.raises(ConfigError):
        store.create("other", cluster())
    assert store.path.read_bytes() == before


def test_file_with_unknown_current_profile_is_an_error(store: ProfileStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text(json.dumps({"current": "gone", "profiles": {}}))
    with pytest.raises(ConfigError, match="current names unknown profile 'gone'"):
        store.load()


def test_svc_ssh_profile_selects_the_current_profile(store: ProfileStore) -> None:
    store.create("a", cluster())
    store.create("b", cluster())
    store.activate("a")

    assert store.host_config(env={"SVC_SSH_PROFILE": "b"}).current_profile == "b"
    assert store.host_config(env={}).current_profile == "a"
    with pytest.raises(ConfigError, match="SVC_SSH_PROFILE names unknown SSH profile 'c'; choose one of 'a', 'b'"):
        store.host_config(env={"SVC_SSH_PROFILE": "c"})


def test_svc_ssh_hostname_defines_the_env_profile(store: ProfileStore) -> None:
    store.create("a", cluster())
    store.activate("a")
    env = {"SVC_SSH_HOSTNAME": "direct.example.org", "SVC_SSH_USERNAME": "bob", "SVC_SSH_KEY": "~/.ssh/k"}

    config = store.host_config(env=env)

    assert config.current_profile == "env"
    assert config.profiles["env"].hostname == "direct.example.org"
    assert config.profiles["env"].username == "bob"
    assert config.profiles["env"].key_filename == "~/.ssh/k"
    assert config.profiles["env"].port == 22
    assert set(config.profiles) == {"a", "env"}
    assert store.host_config(env={**env, "SVC_SSH_PORT": "2222"}).profiles["env"].port == 2222
    assert store.host_config(env={**env, "SVC_SSH_PROFILE": "a"}).current_profile == "a"
    with pytest.raises(ConfigError, match="SVC_SSH_PORT must be a port number"):
        store.host_config(env={**env, "SVC_SSH_PORT": "ssh"})
    # The MCP server passes no environment: only the file counts.
    assert store.host_config(env=None).current_profile == "a"
    assert "env" not in store.host_config(env=None).profiles


# -- concurrent writers --------------------------------------------------------------------------------------

ADD_MANY = """
import sys
from pathlib import Path
from svc_host.domain.profiles import SSHProfile
from svc_host.settings.profiles import ProfileStore

store = ProfileStore(Path(sys.argv[1]))
for index in range(int(sys.argv[3])):
    store.create(f"{sys.argv[2]}-{index}", SSHProfile(hostname="login.example.org"))
"""


def test_processes_adding_profiles_at_the_same_time_lose_nothing(store: ProfileStore) -> None:
    writers, each = 4, 15
    procs = [
        subprocess.Popen([sys.executable, "-c", ADD_MANY, str(store.path), f"w{writer}", str(each)])
        for writer in range(writers)
    ]
    assert [proc.wait(timeout=120) for proc in procs] == [0] * writers

    assert sorted(store.list()) == sorted(f"w{w}-{i}" for w in range(writers) for i in range(each))
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.lock_path.stat().st_mode) == 0o600
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["profiles.json", "profiles.json.lock"]


# -- env_vars keys ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["-Secho INJECTED #", "A B", "1ABC", "A=B", "", "A;ls", "PATH\n"])
def test_env_var_keys_must_be_posix_names(store: ProfileStore, key: str) -> None:
    with pytest.raises(ValueError, match=r"env_vars key .* is not a variable name"):
        cluster(env_vars={key: "x"})
    store.create("gpu", cluster())
    with pytest.raises(ConfigError, match=r"profile 'gpu': env_vars: .*is not a variable name"):
        store.update("gpu", {"env_vars": {key: "x"}})
    assert store.get("gpu").env_vars == {}


def test_env_var_values_may_hold_anything_but_nul(store: ProfileStore) -> None:
    hostile = "$(touch /tmp/x); `id` | rm -rf ~ #\n'\""
    assert cluster(env_vars={"_OK9": hostile}).env_vars == {"_OK9": hostile}
    with pytest.raises(ValueError, match="env_vars value of 'A' contains a NUL byte"):
        cluster(env_vars={"A": "a\0b"})


def test_a_profiles_file_with_a_hostile_env_key_is_refused_naming_it(store: ProfileStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text(json.dumps({"profiles": {"gpu": {"hostname": "h", "env_vars": {"-Secho X #": "1"}}}}))
    with pytest.raises(ConfigError, match=rf"^{store.path}: profiles.gpu.env_vars: .*is not a variable name"):
        store.host_config(env=None)


# -- accept_unknown_host over the API ----------------------------------------------------------------------------


def test_accepting_unknown_hosts_is_refused_with_one_message() -> None:
    with pytest.raises(ConfigError) as caught:
        refuse_unknown_host(True)
    assert str(caught.value) == UNKNOWN_HOST_REFUSED
    refuse_unknown_host(False)
    refuse_unknown_host(None)


# -- mount remotes ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("remote", "message"),
    [
        ("~", "is your home directory on the cluster"),
        ("~/", "is your home directory on the cluster"),
        (".", "is your home directory on the cluster"),
        ("./", "is your home directory on the cluster"),
        ("$HOME", "starts with \\$HOME, which is not expanded"),
        ("${HOME}/code", "starts with \\$HOME, which is not expanded"),
        ("/", "is the filesystem root"),
        ("//", "is the filesystem root"),
        ("/home", "is the directory of all homes"),
        ("/home/alice", "is a home directory"),
        ("/home/alice/", "is a home directory"),
        ("/home//alice/.", "is a home directory"),
        ("..", "contains '..'"),
        ("~/..", "contains '..'"),
        ("proj/../..", "contains '..'"),
        ("/scratch/alice/../bob", "contains '..'"),
        ("~bob/code", "'~user' is not supported"),
    ],
)
def test_mount_remotes_that_a_mirror_could_wipe_a_home_from_are_refused(
    store: ProfileStore, project: Path, remote: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Mount(name="code", local=str(project), remote=remote)
    store.path.parent.mkdir(parents=True)
    mount = {"name": "code", "local": str(project), "remote": remote}
    store.path.write_text(json.dumps({"profiles": {"gpu": {"hostname": "h", "mounts": [mount]}}}))
    with pytest.raises(ConfigError, match=rf"^{store.path}: profiles.gpu.mounts.0.remote: "):
        store.list()


@pytest.mark.parametrize(
    "remote", ["~/code", "code", "/home/alice/code", "/scratch/alice", "/r", "-odd/dir", "a/$(id)/$HOME"]
)
def test_project_directories_are_fine_remotes(project: Path, remote: str) -> None:
    assert Mount(name="code", local=str(project), remote=remote).remote == remote
