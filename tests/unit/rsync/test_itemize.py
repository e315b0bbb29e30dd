"""The itemize parser on output recorded from real rsync 3.5 runs over the dev cluster's sshd."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_plugin_rsync.itemize import Item, decode_name, parse_line, summarize

DATA = Path(__file__).parent / "data"


def recorded(name: str) -> list[bytes]:
    return (DATA / name).read_bytes().splitlines(keepends=True)


def test_mirror_dry_run_splits_transfers_deletions_and_listing() -> None:
    summary = summarize(recorded("mirror-dry-run.out"))
    assert summary.deleted == [
        "old/deep/f1",
        "old/deep/",
        "old/f2",
        "old/",
        "  stale",  # leading spaces kept
        "gone/y",
        "gone/x",
        "gone/",  # replaced by the local file "gone": rsync does not itemize it, it is gone all the same
    ]
    assert summary.transferred == [
        " lead space",
        "$(touch pwned)",
        "a",
        "a|b",
        "back\\#123slash",
        "gone",
        "it's",
        "link",
        "new\nline",
        "tab\tname",
        "dir with space/f",
        "sub/ü x",
    ]
    assert "same" in summary.listed  # unchanged entries are listed under -ii
    assert "same" not in summary.transferred
    assert {"dir with space/", "sub/"} <= set(summary.listed)
    assert "./" not in summary.listed


def test_first_upload_counts_files_not_directories_and_skips_other_lines() -> None:
    summary = summarize(recorded("first-upload.out"))  # starts with "created directory svc-rec-new"
    assert len(summary.transferred) == 13
    assert summary.deleted == []
    assert set(summary.listed) - set(summary.transferred) == {"dir with space/", "sub/"}


def test_update_counts_content_changes_and_new_links_not_attribute_changes() -> None:
    summary = summarize(recorded("update.out"))
    assert summary.transferred == ["changed", "newlink"]
    assert summary.listed == ["changed", "newlink", "perm", "d/", "d/same"]


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        (b"plain", "plain"),
        (b"new\\#012line", "new\nline"),
        (b"back\\#134#123slash", "back\\#123slash"),
        (b"\xc3\xbc x", "ü x"),
        (b"bad \xff byte", "bad \ufffd byte"),
        (b"not\\#8escape", "not\\#8escape"),
        (b"\\#033[31mred", "\x1b[31mred"),
    ],
)
def test_decode_name(raw: bytes, name: str) -> None:
    assert decode_name(raw) == name


@pytest.mark.parametrize(
    "line",
    [b"created directory x\n", b"", b"svc-item <f+++++++++\n", b"svc-item <f+++++++++|\n", b"sending incremental"],
)
def test_lines_that_are_not_items(line: bytes) -> None:
    assert parse_line(line) is None


def test_item_line_endings_and_pipes_in_names() -> None:
    assert parse_line(b"svc-item <f+++++++++|a|b|c\r\n") == Item("<f+++++++++", "a|b|c")
    assert parse_line(b"svc-item *deleting  |   spaced \n") == Item("*deleting  ", "   spaced ")


def test_directory_replaced_by_a_nested_file_tree_counts_each_directory_once() -> None:
    lines = [
        b"svc-item *deleting  |d/sub/x\n",
        b"svc-item *deleting  |d/sub/\n",
        b"svc-item *deleting  |d/y\n",
        b"svc-item <f+++++++++|d\n",
    ]
    assert summarize(lines).deleted == ["d/sub/x", "d/sub/", "d/y", "d/"]
