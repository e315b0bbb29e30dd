"""svc's exclude patterns as rsync arguments."""

from __future__ import annotations

from svc_plugin_rsync.excludes import filter_args


def test_patterns_cannot_become_includes() -> None:
    # With --exclude, "+ keep" would be read as an include rule and "!" would clear the list.
    assert filter_args(["+ keep", "!"]) == ["--filter=- + keep", "--filter=- !"]
