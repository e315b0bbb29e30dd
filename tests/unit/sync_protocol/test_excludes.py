"""svc's default excludes, the user's, and ``is_excluded`` held against what real rsync skips."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from svc_host.plugin import DEFAULT_EXCLUDES, Mount, SvcPaths, SyncError, is_excluded, sync_excludes
from svc_host.settings.config import trust_project
from svc_host.transports.sync_excludes import effective_excludes, exclude_hash


def test_defaults_cover_vcs_caches_envs_and_svcs_own_files() -> None:
    for pattern in (".git/", "__pycache__/", "*.pyc", ".venv/", "node_modules/", ".svc-manifest.json", ".svc-owner"):
        assert pattern in DEFAULT_EXCLUDES
    assert ".svc-manifest.json.tmp-*" in DEFAULT_EXCLUDES  # a write interrupted mid-way is not mirrored away


def test_extra_patterns_follow_the_defaults_once() -> None:
    patterns = effective_excludes(["*.ckpt", ".git/", "*.ckpt", "/data/"])
    assert patterns == [*DEFAULT_EXCLUDES, "*.ckpt", "/data/"]


@pytest.mark.parametrize("pattern", ["", "   ", "a\nb", "nul\0"])
def test_invalid_extra_patterns(pattern: str) -> None:
    with pytest.raises(SyncError, match="exclude pattern"):
        effective_excludes([pattern])


def test_hash_changes_with_the_list_only() -> None:
    assert exclude_hash(effective_excludes()) == exclude_hash(list(DEFAULT_EXCLUDES))
    assert exclude_hash(effective_excludes(["*.log"])) != exclude_hash(effective_excludes())


def test_an_untrusted_project_file_adds_no_excludes_and_stops_nothing(tmp_path: Path) -> None:
    """Issue 26: a cloned repository's ``.svc.json`` must not spare its files from a mirror's deletions."""
    (tmp_path / ".svc.json").write_text('{"exclude": ["*.ckpt"]}')
    mount = Mount(name="m", local=str(tmp_path), remote="proj", exclude=["data/"])
    assert sync_excludes(mount) == [*DEFAULT_EXCLUDES, "data/"]
    trust_project(SvcPaths.from_env(), tmp_path)
    assert sync_excludes(mount) == [*DEFAULT_EXCLUDES, "data/", "*.ckpt"]
    (tmp_path / ".svc.json").write_text('{"exclude": ["*.ckpt", "*.bin"]}')  # changed since: untrusted again
    assert sync_excludes(mount) == [*DEFAULT_EXCLUDES, "data/"]
    (tmp_path / ".svc.json").write_text('{"exclude": "not a list"}')  # invalid but untrusted: ignored
    assert sync_excludes(mount) == [*DEFAULT_EXCLUDES, "data/"]


def test_a_fifo_or_directory_under_the_project_files_name_stops_nothing(tmp_path: Path) -> None:
    """Read without blocking (``read_config_bytes``): a FIFO would hang a plain read."""
    os.mkfifo(tmp_path / ".svc.json")
    mount = Mount(name="m", local=str(tmp_path), remote="proj")
    assert sync_excludes(mount) == list(DEFAULT_EXCLUDES)
    (tmp_path / ".svc.json").unlink()
    (tmp_path / ".svc.json").mkdir()
    assert sync_excludes(mount) == list(DEFAULT_EXCLUDES)


TREE = [
    "a.py", "a.pyc", "run.ckpt", "sub/run.ckpt", "data/x.bin", "sub/data/y.bin", "sub/data", "logs/a/b.log",
    "logs/top.log", "build/out/o.txt", "src/build/keep.txt", ".git/HEAD", "pkg/__pycache__/m.pyc", "x?y",
    "notes[1].txt", "notes1.txt", "deep/er/tmp/t.txt", "tmp/t.txt", "only/dir/", "only/file",
]  # fmt: skip
PATTERNS = [
    ["*.ckpt"], ["data/"], ["/data/"], ["logs/**"], ["build/out/"], ["/build/"], ["notes[0-9].txt"], ["x\\?y"],
    ["er/tmp/"], ["tmp/***"], ["only/dir"], ["sub/*.ckpt"], ["**/data/"], ["?.py"], ["*.py[co]"],
    ["logs/**/b.log"], ["deep/**/tmp/"], ["sub/**"],
    ["tmp/"], ["*"], ["[!a]*.py"],
]  # fmt: skip


@pytest.mark.parametrize("patterns", PATTERNS, ids=" ".join)
def test_is_excluded_skips_what_rsync_skips(tmp_path: Path, patterns: list[str]) -> None:
    rsync = shutil.which("rsync")
    if rsync is None:
        pytest.skip("rsync is not installed")
    src = tmp_path / "src"
    for entry in TREE:
        path = src / entry
        if entry.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        elif not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
    argv = [rsync, "-a", "--dry-run", "--out-format=%n", *(f"--filter=- {p}" for p in patterns), f"{src}/", "dst/"]
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    sent = {line.rstrip("/") for line in out.splitlines() if line and line != "./"}
    every = {str(path.relative_to(src)) for path in src.rglob("*")}
    ours = {p for p in every if not is_excluded(p, is_dir=(src / p).is_dir(), patterns=patterns)}
    assert ours == sent
