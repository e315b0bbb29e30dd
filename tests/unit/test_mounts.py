"""``svc_host.settings.mounts``: finding mounts, the one path translation, and the local boundary of browse/read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.errors import InvalidRequestError, NotFoundError
from svc_host.plugin_core.records import TransportSpec
from svc_host.settings.mounts import (
    FileTooLargeError,
    PathForbiddenError,
    clean_relative,
    cluster_paths,
    find_mount,
    list_directory,
    read_file,
    resolve_inside,
)

LOCAL_ROOT = "/home/ada/code/proj"
GPU = TransportSpec(name="gpu", factory=object, remote=True, mounts=True)


def profiles(remote: str = "/scratch/ada/proj") -> dict[str, SSHProfile]:
    mount = Mount(name="proj", local=LOCAL_ROOT, remote=remote)
    return {"gpu": SSHProfile(hostname="login", mounts=[mount]), "empty": SSHProfile(hostname="other")}


# -- find_mount -------------------------------------------------------------------------------------------


def test_find_mount_returns_the_named_mount() -> None:
    assert find_mount(profiles(), "gpu", "proj").remote == "/scratch/ada/proj"


def test_unknown_mount_has_the_spec_message() -> None:
    with pytest.raises(NotFoundError) as caught:
        find_mount(profiles(), "empty", "proj")
    assert str(caught.value) == "Mount 'proj' not found in profile 'empty'"


def test_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(NotFoundError, match=r"SSH profile 'nope' not found; known profiles: 'empty', 'gpu'"):
        find_mount(profiles(), "nope", "proj")


# -- cluster_paths ----------------------------------------------------------------------------------------


def test_without_mount_paths_are_used_as_given() -> None:
    paths = cluster_paths(profiles(), GPU, None, work_dir="run", log_dir="logs")
    assert (paths.work_dir, paths.log_dir, paths.job_log_dir) == ("run", "logs", "logs")


@pytest.mark.parametrize(
    "transport",
    [
        None,
        TransportSpec(name="local", factory=object),
        TransportSpec(name="site", factory=object, remote=True),  # remote, but no profile whose mounts apply
    ],
)
def test_mount_without_ssh_transport_is_refused_with_the_spec_message(transport: TransportSpec | None) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        cluster_paths(profiles(), transport, "proj", work_dir=None, log_dir="logs")
    message = str(caught.value)
    assert message.startswith("mount requires an SSH transport; pass transport='<profile>'")
    assert "local runs have no mount translation" in message


def test_unknown_mount_in_translation_has_the_spec_message() -> None:
    with pytest.raises(NotFoundError, match=r"^Mount 'data' not found in profile 'gpu'$"):
        cluster_paths(profiles(), GPU, "data", work_dir=None, log_dir="logs")


@pytest.mark.parametrize(
    ("work_dir", "log_dir", "expected"),
    [
        # no work_dir: the mount root; relative paths are under the root
        (None, "logs", ("/scratch/ada/proj", "/scratch/ada/proj/logs")),
        ("exp/one", "logs", ("/scratch/ada/proj/exp/one", "/scratch/ada/proj/logs")),
        ("./exp/../exp2/", "out/logs", ("/scratch/ada/proj/exp2", "/scratch/ada/proj/out/logs")),
        # absolute paths under the local directory: the same place under the remote root
        (f"{LOCAL_ROOT}/exp", f"{LOCAL_ROOT}/logs", ("/scratch/ada/proj/exp", "/scratch/ada/proj/logs")),
        (LOCAL_ROOT, "logs", ("/scratch/ada/proj", "/scratch/ada/proj/logs")),
        # other absolute paths are cluster paths, kept
        ("/tmp/run", "/var/log/jobs", ("/tmp/run", "/var/log/jobs")),
        (f"{LOCAL_ROOT}-other/x", "logs", (f"{LOCAL_ROOT}-other/x", "/scratch/ada/proj/logs")),
    ],
)
def test_translation_onto_an_absolute_remote_root(
    work_dir: str | None, log_dir: str, expected: tuple[str, str]
) -> None:
    paths = cluster_paths(profiles(), GPU, "proj", work_dir=work_dir, log_dir=log_dir)
    assert (paths.work_dir, paths.log_dir) == expected
    assert paths.job_log_dir == paths.log_dir  # absolute: the renderer uses it as it is


@pytest.mark.parametrize(
    ("remote", "work_dir", "log_dir", "expected"),
    [
        ("proj", None, "logs", ("proj", "proj/logs", "logs")),
        ("~/proj/", "exp/a", "logs", ("proj/exp/a", "proj/logs", "../../logs")),
        ("~/proj", "exp", "exp/logs", ("proj/exp", "proj/exp/logs", "logs")),
        ("proj", "exp", "/abs/logs", ("proj/exp", "/abs/logs", "/abs/logs")),
        # an absolute work_dir outside the mount: a relative log_dir stays relative to it
        ("proj", "/scratch/run", "logs", ("/scratch/run", "proj/logs", "logs")),
    ],
)
def test_translation_onto_a_login_relative_root(
    remote: str, work_dir: str | None, log_dir: str, expected: tuple[str, str, str]
) -> None:
    paths = cluster_paths(profiles(remote), GPU, "proj", work_dir=work_dir, log_dir=log_dir)
    assert (paths.work_dir, paths.log_dir, paths.job_log_dir) == expected


@pytest.mark.parametrize("path", ["..", "../x", "a/../../x", "./.."])
def test_relative_paths_may_not_climb_above_the_mount_root(path: str) -> None:
    with pytest.raises(InvalidRequestError, match=r"climbs above the root of mount 'proj'"):
        cluster_paths(profiles(), GPU, "proj", work_dir=path, log_dir="logs")
    with pytest.raises(InvalidRequestError, match=r"log_dir .* climbs above"):
        cluster_paths(profiles(), GPU, "proj", work_dir=None, log_dir=path)


# -- the boundary -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("", ""),
        (".", ""),
        ("a/b/", "a/b"),
        ("a/./b", "a/b"),
        ("a/../b", "b"),
        ("a//b", "a/b"),
        ("a\\..\\b", "a\\..\\b"),
    ],
)
def test_clean_relative(relative: str, expected: str) -> None:
    assert clean_relative(relative) == expected


@pytest.mark.parametrize(
    ("relative", "error"),
    [
        ("..", PathForbiddenError),
        ("a/../..", PathForbiddenError),
        ("../root/x", PathForbiddenError),  # climbing out and back in is still traversal
        ("/etc/passwd", PathForbiddenError),
        ("a\0b", InvalidRequestError),
        ("a/" * 3000, InvalidRequestError),
    ],
)
def test_clean_relative_rejects(relative: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        clean_relative(relative)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# readme\n")
    (root / "Zeta").mkdir()
    (root / "alpha.txt").write_text("a")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    (root / "latin1.txt").write_bytes(b"caf\xe9\n")
    (root / "link-in").symlink_to("src")
    (root / "link-file").symlink_to("src/main.py")
    (root / "link-out").symlink_to(tmp_path)
    (root / "link-abs-out").symlink_to("/etc/passwd")
    (root / "dangling").symlink_to("missing")
    os.mkfifo(root / "fifo")
    return root


def mount_of(root: Path) -> Mount:
    return Mount(name="proj", local=str(root), remote="proj")


def test_resolve_inside_follows_symlinks_that_stay_inside(tree: Path) -> None:
    assert resolve_inside(str(tree), "link-in/main.py") == str(tree / "src" / "main.py")
    # what counts is where the path ends: out through a symlink and back in is inside
    assert resolve_inside(str(tree), "link-out/root/README.md") == str(tree / "README.md")
    assert resolve_inside(str(tree), "missing/file") == str(tree / "missing" / "file")


@pytest.mark.parametrize("relative", ["link-out", "link-out/elsewhere", "link-abs-out", "link-in/../../x"])
def test_resolve_inside_refuses_what_leaves_the_root(tree: Path, relative: str) -> None:
    with pytest.raises(PathForbiddenError):
        resolve_inside(str(tree), relative)


def test_listing_sorts_directories_first_and_describes_symlinks(tree: Path) -> None:
    entries = [entry.as_json() for entry in list_directory(mount_of(tree), "").entries]
    assert entries == [
        {"name": "link-in", "type": "symlink", "size": None, "accessible": True, "target_kind": "directory"},
        {"name": "src", "type": "directory", "size": None},
        {"name": "Zeta", "type": "directory", "size": None},
        {"name": "alpha.txt", "type": "file", "size": 1},
        {"name": "blob.bin", "type": "file", "size": 3},
        {"name": "dangling", "type": "symlink", "size": None, "accessible": False, "target_kind": None},
        {"name": "latin1.txt", "type": "file", "size": 5},
        {"name": "link-abs-out", "type": "symlink", "size": None, "accessible": False, "target_kind": None},
        {"name": "link-file", "type": "symlink", "size": None, "accessible": True, "target_kind": "file"},
        {"name": "link-out", "type": "symlink", "size": None, "accessible": False, "target_kind": None},
        {"name": "README.md", "type": "file", "size": 9},
    ]


def test_listing_through_an_inside_directory_symlink(tree: Path) -> None:
    names = [entry.name for entry in list_directory(mount_of(tree), "link-in").entries]
    assert names == ["pkg", "main.py"]


def test_a_listing_reads_at_most_its_limit_and_says_when_there_is_more(tree: Path) -> None:
    (tree / "src" / "pkg" / "one.txt").write_text("1")
    (tree / "src" / "pkg" / "two.txt").write_text("2")
    full = list_directory(mount_of(tree), "src/pkg", limit=2)
    assert ([entry.name for entry in full.entries], full.truncated) == (["one.txt", "two.txt"], False)
    (tree / "src" / "pkg" / "three.txt").write_text("3")
    over = list_directory(mount_of(tree), "src/pkg", limit=2)
    assert over.truncated
    assert len(over.entries) == 2
    assert {entry.name for entry in over.entries} < {"one.txt", "two.txt", "three.txt"}


def test_listing_errors(tree: Path) -> None:
    mount = mount_of(tree)
    with pytest.raises(NotFoundError, match=r"^'nope' in mount 'proj' not found$"):
        list_directory(mount, "nope")
    with pytest.raises(InvalidRequestError, match="is not a directory"):
        list_directory(mount, "alpha.txt")
    with pytest.raises(PathForbiddenError):
        list_directory(mount, "link-out")


def test_missing_local_root_is_not_found_without_its_path(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as caught:
        list_directory(mount_of(tmp_path / "gone"), "")
    assert str(tmp_path) not in str(caught.value)


def test_read_file_returns_the_bytes(tree: Path) -> None:
    mount = mount_of(tree)
    assert read_file(mount, "link-in/main.py") == b"print('hi')\n"
    assert read_file(mount, "blob.bin") == b"\x00\x01\x02"


@pytest.mark.parametrize(("relative", "error"), [("src", InvalidRequestError), ("fifo", InvalidRequestError),
                                                 ("", InvalidRequestError), ("nope.txt", NotFoundError),
                                                 ("link-abs-out", PathForbiddenError)])  # fmt: skip
def test_read_file_errors(tree: Path, relative: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        read_file(mount_of(tree), relative)


def test_read_limit(tree: Path) -> None:
    (tree / "big.txt").write_bytes(b"x" * 1025)
    mount = mount_of(tree)
    assert len(read_file(mount, "big.txt", limit=1025)) == 1025
    with pytest.raises(FileTooLargeError, match="1025 bytes, over the 1024 byte read limit"):
        read_file(mount, "big.txt", limit=1024)
    assert len(read_file(mount, "big.txt", limit=None)) == 1025


def test_unreadable_file_and_directory_are_forbidden(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)  # tests run as root too, where chmod 0 would not stop a read
    monkeypatch.setattr(os, "scandir", denied)
    with pytest.raises(PathForbiddenError, match=r"^permission denied: 'alpha.txt' in mount 'proj'$"):
        read_file(mount_of(tree), "alpha.txt")
    with pytest.raises(PathForbiddenError, match=r"^permission denied: 'src' in mount 'proj'$"):
        list_directory(mount_of(tree), "src")
