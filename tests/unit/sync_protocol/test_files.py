"""svc's files on a mount's remote: the owner marker, the upload record, what a backend found, the machine id."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from svc_host.plugin import (
    DEFAULT_EXCLUDES,
    FileState,
    FoundFile,
    OwnerMarker,
    StaleUnknownReason,
    UploadRecord,
    machine_id,
    stale_uploads,
)
from svc_host.transports import sync_files
from svc_host.transports.sync_excludes import exclude_hash

NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
EXCLUDES = list(DEFAULT_EXCLUDES)


def record(paths: list[str], excludes: list[str] = EXCLUDES) -> UploadRecord:
    return UploadRecord(exclude_hash=exclude_hash(excludes), exclude_patterns=excludes, updated_at=NOW, paths=paths)


def test_machine_id_derives_from_system_id_without_revealing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = tmp_path / "machine-id"
    system.write_text("3d1219c7c4c5404aaa1f6d2a48adfda4\n")
    monkeypatch.setattr(sync_files, "MACHINE_ID_FILE", system)
    first = machine_id(tmp_path / "state")
    assert first == machine_id(tmp_path / "other") == machine_id()
    assert "3d1219c7" not in first
    assert not (tmp_path / "state").exists()


def test_machine_id_without_system_id_is_generated_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync_files, "MACHINE_ID_FILE", tmp_path / "no-machine-id")
    state = tmp_path / "state"
    first = machine_id(state)
    assert (state / "machine-id").read_text().strip()
    assert machine_id(state) == first
    assert machine_id(tmp_path / "elsewhere") != first


def test_marker_round_trip_and_garbage() -> None:
    marker = OwnerMarker.new("m1")
    assert OwnerMarker.parse(marker.dump()) == marker
    assert OwnerMarker.parse(b"not json") is None
    assert OwnerMarker.parse(b'{"hostname": "x"}') is None


def test_describe_names_who_holds_the_mount() -> None:
    marker = OwnerMarker(machine_id="abcdef0123456789", hostname="laptop", user="ada", claimed_at=NOW)
    assert marker.describe() == "ada@laptop (machine abcdef012345, since 2025-05-01 12:00 UTC)"


def test_record_round_trip_with_odd_names() -> None:
    original = record(["a b", " lead", "new\nline", "ü/", "bad \udcff"])
    assert UploadRecord.parse(original.dump()) == original


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
    with pytest.raises(ValueError, match=message):
        UploadRecord.parse(data)
    assert UploadRecord.previous(FoundFile(FileState.OK, data=data), mount="m") is None  # a new record starts


def test_after_sync_adds_this_syncs_paths_and_drops_deleted_ones() -> None:
    merged = UploadRecord.after_sync(
        record(["a", "gone/", "gone/x", "old"]), listed=["b", "a"], deleted=["gone/", "gone/x"], excludes=EXCLUDES,
        machine="m1",
    )  # fmt: skip
    assert merged.paths == ["a", "b", "old"]  # "old" stays recorded: it is a stale upload until mirrored
    assert (merged.exclude_hash, merged.updated_by) == (exclude_hash(EXCLUDES), "m1")


def test_after_sync_restarts_when_there_was_no_record_or_another_filter() -> None:
    for previous in (None, record(["old"], excludes=[*EXCLUDES, "*.log"])):
        assert UploadRecord.after_sync(previous, listed=["a"], deleted=[], excludes=EXCLUDES, machine="m").paths == [
            "a"
        ]


def test_a_symlinked_record_refuses_the_sync() -> None:
    from svc_host.plugin import SyncError

    with pytest.raises(SyncError, match="symlink"):
        UploadRecord.previous(FoundFile(FileState.SYMLINK), mount="m")
    assert UploadRecord.previous(FoundFile(FileState.MISSING), mount="m") is None


def test_stale_uploads_and_why_they_are_unknown() -> None:
    found = FoundFile(FileState.OK, data=record(["a", "d/", "d/x", "keep"]).dump())
    assert stale_uploads(found, excludes=EXCLUDES, local=["keep", "new"]) == (["a", "d/", "d/x"], None)
    cases = {
        FoundFile(FileState.MISSING): StaleUnknownReason.NO_RECORD,
        FoundFile(FileState.FOREIGN): StaleUnknownReason.FOREIGN_RECORD,
        FoundFile(FileState.SYMLINK): StaleUnknownReason.UNREADABLE_RECORD,
        FoundFile(FileState.OK, data=b"{broken"): StaleUnknownReason.UNREADABLE_RECORD,
        found: StaleUnknownReason.EXCLUDE_CHANGED,
    }
    for given, reason in cases.items():
        excludes = [*EXCLUDES, "*.log"] if given is found else EXCLUDES
        assert stale_uploads(given, excludes=excludes, local=[]) == ([], reason)


@pytest.mark.parametrize(
    ("mode", "uid", "size", "state"),
    [
        (stat.S_IFREG | 0o600, 1000, 10, FileState.OK),
        (stat.S_IFLNK | 0o777, 1000, 10, FileState.SYMLINK),
        (stat.S_IFDIR | 0o700, 1000, 10, FileState.UNREADABLE),
        (stat.S_IFIFO | 0o600, 1000, 0, FileState.UNREADABLE),
        (stat.S_IFREG | 0o644, 0, 10, FileState.FOREIGN),
        (stat.S_IFREG | 0o600, 1000, 11, FileState.UNREADABLE),
    ],
)
def test_a_found_file_is_ok_only_as_a_small_regular_file_of_ours(mode: int, uid: int, size: int, state: str) -> None:
    found = FoundFile.checked(mode=mode, uid=uid, size=size, my_uid=1000, limit=10, data=b"x" * min(size, 10))
    assert found.state == state
    assert found.data == (b"x" * size if state == FileState.OK else b"")
