"""Default and per-mount exclude patterns."""

from __future__ import annotations

import pytest

from svc_host.errors import SyncError
from svc_plugin_rsync.excludes import DEFAULT_EXCLUDES, effective_excludes, exclude_hash, filter_args


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


def test_patterns_cannot_become_includes() -> None:
    # With --exclude, "+ keep" would be read as an include rule and "!" would clear the list.
    assert filter_args(["+ keep", "!"]) == ["--filter=- + keep", "--filter=- !"]
