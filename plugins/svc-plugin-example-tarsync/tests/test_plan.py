"""What the tarsync backend sends and deletes, worked out from a real local tree and a remote listing in
``find -printf`` form (recorded from the dev cluster's GNU find)."""

from __future__ import annotations

import os
from pathlib import Path

from svc_host.plugin import DEFAULT_EXCLUDES

from svc_example_tarsync.plan import Entry, local_tree, parse_listing, plan

EXCLUDES = [*DEFAULT_EXCLUDES, "data/"]
# `find DIR -mindepth 1 -printf "%y %s %T@ %P\0"` on the dev cluster (GNU findutils 4.9.0), recorded 2026-11-28
RECORDED = (
    b"l 5 1795894712.6446026870 link\x00d 4096 1795894712.6446026870 sub\x00f 1 1795894712.6446026870 sub/b.txt\x00"
    b"f 3 1764358000.0000000000 new\nline\x00f 1 1795894712.6446026870 a.txt\x00"
)


def test_the_recorded_listing_parses_to_kinds_sizes_and_whole_seconds() -> None:
    assert parse_listing(RECORDED) == {
        "a.txt": Entry("f", 1, 1795894712),
        "sub": Entry("d", 0, 1795894712),
        "sub/b.txt": Entry("f", 1, 1795894712),
        "link": Entry("l", 0, 1795894712),
        "new\nline": Entry("f", 3, 1764358000),
    }


def test_the_local_tree_skips_excluded_paths_and_does_not_enter_excluded_directories(tmp_path: Path) -> None:
    for name in ("a.py", "x.pyc", "data/big.bin", "sub/data/deep.bin", ".git/HEAD", "sub/keep.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    os.symlink("a.py", tmp_path / "alias")
    tree = local_tree(tmp_path, EXCLUDES)
    assert sorted(tree) == ["a.py", "alias", "sub", "sub/keep.txt"]
    assert (tree["alias"].kind, tree["sub"].kind, tree["a.py"].size) == ("l", "d", 1)


def test_changed_and_new_files_are_sent_unchanged_ones_not() -> None:
    local = {"same": Entry("f", 1, 10), "bigger": Entry("f", 2, 10), "newer": Entry("f", 1, 11), "d": Entry("d")}
    remote = {"same": Entry("f", 1, 10), "bigger": Entry("f", 1, 10), "newer": Entry("f", 1, 10)}
    todo = plan(local, remote, delete=False, excludes=EXCLUDES)
    assert todo.send == ["bigger", "d/", "newer"]
    assert todo.transferred == ["bigger", "newer"]
    assert todo.listed == ["bigger", "d/", "newer", "same"]
    assert todo.delete == []


def test_a_mirror_deletes_what_is_not_local_but_spares_excluded_paths_and_their_directories() -> None:
    remote = {
        "gone": Entry("d"), "gone/x": Entry("f", 1, 1), "job.out": Entry("f", 1, 1),
        "data": Entry("d"), "data/result.bin": Entry("f", 1, 1),
        "mixed": Entry("d"), "mixed/y": Entry("f", 1, 1), "mixed/__pycache__": Entry("d"),
        ".svc-owner": Entry("f", 1, 1), "now-a-dir": Entry("f", 1, 1),
    }  # fmt: skip
    local = {"now-a-dir": Entry("d")}
    todo = plan(local, remote, delete=True, excludes=EXCLUDES)
    assert todo.delete == ["gone/", "gone/x", "job.out", "mixed/y", "now-a-dir"]  # "mixed/" holds an excluded entry
    assert todo.send == ["now-a-dir/"]
