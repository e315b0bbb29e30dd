"""``svc sync``, ``svc inspect``, ``svc files ls|cat`` and ``svc profile test`` as a user runs them."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore
from svc_host.testing.sync_contract import write_tree


def svc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def store() -> ProfileStore:
    return ProfileStore(SvcPaths.from_env().profiles_file)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_tree(root, {"src/main.py": "print('hi')\n", "README.md": "# readme\n"})
    (root / "data").mkdir()
    (root / "blob.bin").write_bytes(b"\x00\xff")
    (root / "escape").symlink_to(tmp_path)
    return root


@pytest.fixture
def local_profile(store: ProfileStore, project: Path) -> None:
    """A current profile ``dev`` whose mount ``proj`` is ``project`` (no SSH needed for ``svc files``)."""
    store.create("dev", SSHProfile(hostname="login.example.org"))
    store.add_mount("dev", Mount(name="proj", local=str(project), remote="proj"))
    store.activate("dev")


# -- svc files ----------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("local_profile")
def test_files_ls_json_and_table() -> None:
    listed = svc("files", "ls", "proj", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [
        {"name": "data", "type": "directory", "size": None},
        {"name": "src", "type": "directory", "size": None},
        {"name": "blob.bin", "type": "file", "size": 2},
        {"name": "escape", "type": "symlink", "size": None, "accessible": False, "target_kind": None},
        {"name": "README.md", "type": "file", "size": 9},
    ]
    table = svc("files", "ls", "proj")
    assert "src/" in table.stdout
    assert "escape -> (outside the mount or dangling)" in table.stdout
    assert [row["name"] for row in json.loads(svc("files", "ls", "proj", "src", "--json").stdout)] == ["main.py"]


@pytest.mark.usefixtures("local_profile")
def test_files_cat_prints_the_bytes() -> None:
    assert svc("files", "cat", "proj", "src/main.py").stdout == "print('hi')\n"
    raw = subprocess.run(
        [sys.executable, "-m", "svc_host", "files", "cat", "proj", "blob.bin"], capture_output=True, check=True
    )
    assert raw.stdout == b"\x00\xff"


@pytest.mark.usefixtures("local_profile")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("files", "cat", "proj", "../project/README.md"), "error: path is outside the mount"),
        (("files", "cat", "proj", "escape/x"), "error: path is outside the mount"),
        (("files", "ls", "proj", "/etc"), "error: path must be relative to the mount root; absolute paths are "
                                          "not allowed"),
        (("files", "cat", "proj", "src"), "error: 'src' in mount 'proj' is not a file"),
        (("files", "ls", "proj", "README.md"), "error: 'README.md' in mount 'proj' is not a directory"),
        (("files", "ls", "nope"), "error: Mount 'nope' not found in profile 'dev'"),
        (("files", "ls", "proj", "-t", "local"), "error: 'local' has no mounts; pass an SSH profile with --transport"),
        (("files", "ls", "proj", "-t", "gpu"), "error: SSH profile 'gpu' not found; known profiles: 'dev'"),
    ],
)  # fmt: skip
def test_files_errors_are_one_line(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    result = svc(*args)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [message]


def test_without_a_current_profile(store: ProfileStore) -> None:
    for args in (("files", "ls", "proj"), ("sync", "proj"), ("inspect", "proj")):
        result = svc(*args)
        assert result.returncode == 1
        assert result.stderr.strip() == (
            "error: no SSH profile is current; pass --transport PROFILE or run `svc profile use PROFILE`"
        )


def test_max_delete_must_be_at_least_one() -> None:
    result = svc("sync", "proj", "--delete", "--max-delete", "0")
    assert result.returncode == 2
    assert "Invalid value for '--max-delete': 0 is not in the range x>=1" in result.stderr


# -- against the dev cluster --------------------------------------------------------------------------------


@pytest.fixture
def dev(store: ProfileStore, dev_profile: SSHProfile, project: Path) -> Iterator[str]:
    """The current profile ``dev`` (the dev sshd) with mount ``proj`` at a fresh remote directory, removed after."""
    base = f"svc-cli-test-{uuid.uuid4().hex[:12]}"
    store.create("dev", dev_profile)
    store.add_mount("dev", Mount(name="proj", local=str(project), remote=f"{base}/proj"))
    store.activate("dev")
    yield f"{base}/proj"
    remote_sh(dev_profile, "rm", "-rf", "--", base)


def remote_sh(profile: SSHProfile, *argv: str) -> str:
    return subprocess.run(
        ["ssh", "-p", str(profile.port), "-i", profile.key_filename, "-o", "BatchMode=yes",
         "-o", f"UserKnownHostsFile={profile.known_hosts}", f"{profile.username}@{profile.hostname}", shlex.join(argv)],
        capture_output=True, text=True, timeout=60, check=False,
    ).stdout  # fmt: skip


@pytest.mark.cluster
def test_sync_inspect_and_mirror(dev: str, dev_profile: SSHProfile, project: Path) -> None:
    tty = {"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1", "COLUMNS": "120"}
    synced = svc("sync", "proj", env=tty)
    assert synced.returncode == 0, synced.stderr
    assert synced.stdout.strip() == f"mount 'proj' -> dev:{dev}: sent 4 file(s)"  # the symlink too
    assert "syncing proj" in synced.stderr  # the progress bar, on stderr
    assert "4 files" in synced.stderr
    assert remote_sh(dev_profile, "cat", f"{dev}/src/main.py") == "print('hi')\n"

    (project / "README.md").unlink()
    report = json.loads(svc("inspect", "proj", "--json").stdout)
    assert (report["mirror_delete_candidates"], report["stale_upload_paths"]) == (1, ["README.md"])
    human = svc("inspect", "proj")
    assert "mirror delete candidates:  1" in human.stdout
    assert "stale uploads:             1 (uploaded by svc, since deleted locally)" in human.stdout
    assert "  README.md" in human.stdout

    preview = svc("sync", "proj", "--delete", "--dry-run")
    assert preview.stdout.splitlines() == [
        f"dry run: mount 'proj' -> dev:{dev}: would send 0 file(s), would delete 1 entry",
        "  would delete: README.md",
    ]
    (project / "src" / "main.py").unlink()
    refused = svc("sync", "proj", "--delete", "--max-delete", "1")
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: mirror of mount 'proj' refused, nothing changed: 2 entries")
    mirrored = svc("sync", "proj", "--delete", "--max-delete", "2")
    assert mirrored.returncode == 0, mirrored.stderr
    assert mirrored.stdout.splitlines()[0] == f"mount 'proj' -> dev:{dev}: sent 0 file(s), deleted 2 entries"
    assert remote_sh(dev_profile, "ls", "-A", dev).split() == [
        ".svc-manifest.json", ".svc-owner", "blob.bin", "data", "escape", "src",
    ]  # fmt: skip


@pytest.mark.cluster
def test_a_first_mirror_into_someone_elses_files_needs_adopt(dev: str, dev_profile: SSHProfile) -> None:
    remote_sh(dev_profile, "mkdir", "-p", f"{dev}/results")
    remote_sh(dev_profile, "touch", f"{dev}/results/run1.csv", f"{dev}/thesis.tex")

    refused = svc("sync", "proj", "--delete")
    assert refused.returncode == 1
    error = refused.stderr.strip()
    assert "\n" not in error
    assert "Traceback" not in error
    assert error.startswith("error: mirror of mount 'proj' refused, nothing changed: the cluster directory")
    assert "holds 2 entries ('results', 'thesis.tex')" in error
    assert "svc sync --adopt" in error
    assert remote_sh(dev_profile, "ls", "-A", dev).split() == ["results", "thesis.tex"]

    adopted = svc("sync", "proj", "--delete", "--adopt")
    assert adopted.returncode == 0, adopted.stderr
    assert "deleted 3 entries" in adopted.stdout
    assert "thesis.tex" not in remote_sh(dev_profile, "ls", "-A", dev).split()


@pytest.mark.cluster
def test_profile_test_ok(store: ProfileStore, dev_profile: SSHProfile) -> None:
    store.create("dev", dev_profile)
    result = svc("profile", "test", "dev")
    assert (result.returncode, result.stdout.strip()) == (0, "ok: 'dev' answers; sinfo lists partitions: debug, gpu")


@pytest.mark.cluster
def test_profile_test_says_what_is_wrong(store: ProfileStore, dev_profile: SSHProfile, tmp_path: Path) -> None:
    empty_known_hosts = tmp_path / "known_hosts"
    empty_known_hosts.touch()
    key = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections in the kernel, never says a word
    with silent:
        cases = {
            "hostkey": (dev_profile.model_copy(update={"known_hosts": str(empty_known_hosts)}), "host key of "),
            "badkey": (dev_profile.model_copy(update={"key_filename": str(key)}), "refused the key of profile"),
            "nosinfo": (dev_profile.model_copy(update={"env_vars": {"PATH": "/nonexistent"}}), "no sinfo: "),
            "silent": (
                SSHProfile(hostname="127.0.0.1", port=silent.getsockname()[1], accept_unknown_host=True),
                "timeout: no answer from 'silent' within 1s",
            ),
        }
        for name, (profile, _) in cases.items():
            store.create(name, profile)
        for name, (_, expected) in cases.items():
            result = svc("profile", "test", name, "--timeout", "1" if name == "silent" else "30")
            assert result.returncode == 1, (name, result.stdout)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1, (name, result.stderr)
            assert expected in lines[0], (name, lines[0])
    assert "is not known (profile 'hostkey'); add it to known_hosts" in svc("profile", "test", "hostkey").stderr


def test_profile_test_of_an_unknown_profile() -> None:
    result = svc("profile", "test", "nope")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: SSH profile 'nope' not found; known profiles: none"
