"""Where workflow files live: names, the 1 MB limit, no-clobber writes, confinement and the scan rules."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.errors import ConflictError, NotFoundError, WorkflowError
from svc_host.settings.mounts import FileTooLargeError, PathForbiddenError
from svc_host.settings.paths import SvcPaths
from svc_host.workflows.files import (
    WorkflowDirectory,
    allowed_roots,
    check_filename,
    confine,
    scan,
    workflows_dir,
    write_workflow_file,
)

TEXT = "name: w\njobs: [{name: a, command: x}]\n"


def test_the_directory_is_configurable(tmp_path: Path) -> None:
    paths = SvcPaths(tmp_path / "etc", tmp_path / "cfg", tmp_path / "state", tmp_path / "project")
    assert workflows_dir(paths, {}) == tmp_path / "state" / "workflows"
    assert workflows_dir(paths, {"SVC_WORKFLOWS_DIR": "flows"}) == (tmp_path / "project" / "flows").resolve()
    assert workflows_dir(paths, {"SVC_WORKFLOWS_DIR": "/srv/flows"}) == Path("/srv/flows")


@pytest.mark.parametrize(
    ("filename", "name"),
    [("a.yaml", "a"), ("my-flow_2.yml", "my-flow_2")],
)
def test_good_filenames(filename: str, name: str) -> None:
    assert check_filename(filename) == name


@pytest.mark.parametrize(
    "filename", ["a.txt", "a", ".yaml", "a b.yaml", "../a.yaml", "a/b.yaml", "runs.yaml", "é.yaml"]
)
def test_bad_filenames(filename: str) -> None:
    with pytest.raises(WorkflowError, match=r"^invalid filename"):
        check_filename(filename)


def test_directory_reads_writes_and_refuses_to_clobber(tmp_path: Path) -> None:
    directory = WorkflowDirectory(tmp_path / "flows")
    assert directory.names() == []
    directory.write("w", TEXT, overwrite=False)
    with pytest.raises(ConflictError, match="workflow 'w' already exists"):
        directory.write("w", TEXT, overwrite=False)
    with pytest.raises(ConflictError):
        directory.write("w", TEXT, extension=".yml", overwrite=False)
    directory.write("w", TEXT.replace("w", "v"), extension=".yml", overwrite=True)
    assert sorted(p.name for p in (tmp_path / "flows").iterdir()) == ["w.yml"]
    assert directory.read("w") == TEXT.replace("w", "v")
    with pytest.raises(FileTooLargeError):
        directory.write("big", "#" * (1024 * 1024 + 1), overwrite=True)
    directory.delete("w")
    with pytest.raises(NotFoundError, match="workflow 'w' not found"):
        directory.read("w")
    with pytest.raises(WorkflowError, match="invalid workflow name"):
        directory.read("../etc/passwd")


def test_workflow_files_are_private_and_staged_under_unpredictable_names(tmp_path: Path) -> None:
    directory = WorkflowDirectory(tmp_path / "flows")
    (tmp_path / "flows").mkdir()
    planted = tmp_path / "flows" / f".w.{os.getpid()}.new"
    planted.symlink_to(tmp_path / "victim")  # what a neighbour could plant for the predictable old name
    created = directory.write("w", TEXT, overwrite=False)
    replaced = directory.write("v", TEXT, overwrite=True)
    written = tmp_path / "out.yaml"
    write_workflow_file(written, TEXT)
    for path in (created, replaced, written):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert not (tmp_path / "victim").exists()
    assert planted.is_symlink()  # left alone: the staging file was a fresh one
    assert sorted(p.name for p in (tmp_path / "flows").iterdir()) == [planted.name, "v.yaml", "w.yaml"]


def test_a_symlink_out_of_the_directory_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.yaml"
    outside.write_text(TEXT)
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "leak.yaml").symlink_to(outside)
    with pytest.raises(NotFoundError):
        WorkflowDirectory(tmp_path / "flows").read("leak")


def test_confinement_resolves_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path)
    assert confine("sub/x.yaml", [root], base=root) == root / "sub" / "x.yaml"
    assert confine(str(root / "new" / "y.yaml"), [root]) == root / "new" / "y.yaml"
    for hostile in ("../x.yaml", "out/x.yaml", "/etc/passwd", "sub/../../x.yaml"):
        with pytest.raises(PathForbiddenError, match=re.escape(f"Path '{hostile}' is outside allowed directories")):
            confine(hostile, [root], base=root)
    with pytest.raises(PathForbiddenError, match=r"^Script path 'x' is outside"):
        confine("x", [root], what="Script path", base=tmp_path)


def test_the_working_directory_is_a_root_trusted_or_not(
    svc_paths: SvcPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory ``svc mcp`` starts in is a root with no flag and whatever its project config: trust decides
    what that config changes, not which files an agent may name."""
    monkeypatch.delenv("SVC_WORKFLOWS_DIR", raising=False)
    project = svc_paths.project_dir.resolve()
    mounted = tmp_path / "mounted"
    mounted.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    profiles = {"gpu": SSHProfile(hostname="h", mounts=[Mount(name="m", local=str(mounted), remote="p")])}
    expected = [project, svc_paths.workflows_dir.resolve(), mounted.resolve()]
    assert allowed_roots(svc_paths, profiles) == expected
    assert confine("flows/w.yaml", allowed_roots(svc_paths, profiles), base=project) == project / "flows" / "w.yaml"
    (project / ".svc.json").write_text('{"log_dir": "logs"}')  # present and untrusted: still a root
    assert allowed_roots(svc_paths, profiles) == expected
    with pytest.raises(PathForbiddenError, match="outside allowed directories"):
        confine(str(elsewhere / "w.yaml"), allowed_roots(svc_paths, profiles), base=project)

    given = replace(svc_paths, extra_roots=(elsewhere.resolve(),))
    assert allowed_roots(given, profiles) == [project, expected[1], elsewhere.resolve(), mounted.resolve()]


def test_only_workflow_files_are_replaced(tmp_path: Path) -> None:
    (tmp_path / "conf.yaml").write_text("a: 1\n")
    with pytest.raises(ConflictError, match="not a workflow file"):
        write_workflow_file(tmp_path / "conf.yaml", TEXT)
    with pytest.raises(WorkflowError, match=r"must end in \.yaml or \.yml"):
        write_workflow_file(tmp_path / "w.json", TEXT)
    (tmp_path / "w.yaml").write_text(TEXT)
    write_workflow_file(tmp_path / "w.yaml", TEXT.replace("w", "z"))
    assert (tmp_path / "w.yaml").read_text() == TEXT.replace("w", "z")


def test_scan_skips_hidden_and_tool_directories_and_non_workflows(tmp_path: Path) -> None:
    for folder in (".git", "node_modules", ".venv", "__pycache__", "a/.cache", "a/b"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "w.yaml").write_text(TEXT)
    (tmp_path / "a" / "plain.yml").write_text("name: only-a-name\n")
    (tmp_path / "a" / "broken.yaml").write_text("jobs: [\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "w.yaml").write_text(TEXT)
    (tmp_path / "a" / "link.yaml").symlink_to(tmp_path / "elsewhere" / "w.yaml")
    found = scan(tmp_path / "a", [tmp_path / "a"])
    assert [(Path(s.path).relative_to(tmp_path).as_posix(), s.name, s.job_count) for s in found] == [
        ("a/b/w.yaml", "w", 1)
    ]
