"""The upload record: parsing, merge rules and stale-upload detection."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from svc_host.transports.sync_backend import StaleUnknownReason
from svc_plugin_rsync.manifest import Manifest, ManifestError, dump, merge, parse, stale_paths, unknown_reason

NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def record(paths: list[str], exclude_hash: str = "h1") -> Manifest:
    return Manifest(exclude_hash=exclude_hash, exclude_patterns=[".git/"], updated_at=NOW, paths=paths)


def test_dump_parse_round_trip_with_odd_names() -> None:
    original = record(["a b", " lead", "new\nline", "ü/", "bad \udcff"])
    assert parse(dump(original)) == original


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"version": 2, "exclude_hash": "h", "updated_at": "2025-01-01T00:00:00Z"}', "unknown version"),
        (b'{"version": 1, "updated_at": "2025-01-01T00:00:00Z"}', "exclude_hash"),
        (b'{"version": 1, "exclude_hash": "h", "updated_at": "x", "paths": []}', "updated_at"),
    ],
)
def test_unreadable_records(data: bytes, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        parse(data)


def test_merge_adds_this_syncs_paths_and_drops_deleted_ones() -> None:
    merged = merge(
        record(["a", "gone/", "gone/x", "old"]),
        listed=["b", "a"],
        deleted=["gone/", "gone/x"],
        exclude_hash="h1",
        exclude_patterns=[".git/"],
        now=NOW,
        updated_by="m1",
    )
    assert merged.paths == ["a", "b", "old"]  # "old" stays recorded: it is a stale upload until mirrored
    assert (merged.exclude_hash, merged.updated_by, merged.updated_at) == ("h1", "m1", NOW)


def test_merge_restarts_when_there_was_no_record_or_another_filter() -> None:
    for previous in (None, record(["old"], exclude_hash="other")):
        merged = merge(previous, listed=["a"], deleted=[], exclude_hash="h1", exclude_patterns=[], now=NOW)
        assert merged.paths == ["a"]


def test_stale_paths_are_recorded_paths_absent_locally() -> None:
    assert stale_paths(record(["a", "d/", "d/x", "keep"]), ["keep", "new"]) == ["a", "d/", "d/x"]


def test_unknown_reason() -> None:
    assert unknown_reason(None, "h1") is StaleUnknownReason.NO_RECORD
    assert unknown_reason(record([], exclude_hash="h0"), "h1") is StaleUnknownReason.EXCLUDE_CHANGED
    assert unknown_reason(record([]), "h1") is None
