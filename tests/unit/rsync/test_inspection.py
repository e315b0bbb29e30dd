"""Building the inspect report from one dry-run summary and the upload record."""

from __future__ import annotations

from datetime import UTC, datetime

from svc_host.plugin import (
    DEFAULT_EXCLUDES,
    FileState,
    FoundFile,
    InspectReport,
    Mount,
    StaleUnknownReason,
    UploadRecord,
)
from svc_host.transports.sync_excludes import exclude_hash
from svc_plugin_rsync.inspection import build_report
from svc_plugin_rsync.itemize import Summary

MOUNT = Mount(name="proj", local="/home/ada/proj", remote="~/proj")
EXCLUDES = list(DEFAULT_EXCLUDES)
SUMMARY = Summary(transferred=["new.py"], deleted=["job.out", "old.py"], listed=["keep.py", "new.py"])


def manifest_record(paths: list[str], excludes: list[str] = EXCLUDES) -> FoundFile:
    manifest = UploadRecord(exclude_hash=exclude_hash(excludes), updated_at=datetime.now(UTC), paths=paths)
    return FoundFile(FileState.OK, data=manifest.dump())


def report(record: FoundFile, max_paths: int = 1000) -> InspectReport:
    return build_report(profile="dev", mount=MOUNT, summary=SUMMARY, record=record, excludes=EXCLUDES,
                        max_paths=max_paths)  # fmt: skip


def test_known_stale_uploads() -> None:
    result = report(manifest_record(["keep.py", "old.py"]))
    assert (result.profile, result.mount, result.local, result.remote) == ("dev", "proj", "/home/ada/proj", "~/proj")
    assert result.files_would_transfer == 1
    assert (result.mirror_delete_candidates, result.mirror_delete_candidate_paths) == (2, ["job.out", "old.py"])
    assert (result.stale_uploads_known, result.stale_uploads, result.stale_upload_paths) == (True, 1, ["old.py"])
    assert result.stale_uploads_unknown_reason == ""
    assert result.effective_exclude_patterns == EXCLUDES


def test_unknown_reasons() -> None:
    cases = {
        StaleUnknownReason.NO_RECORD: FoundFile(FileState.MISSING),
        StaleUnknownReason.FOREIGN_RECORD: FoundFile(FileState.FOREIGN),
        StaleUnknownReason.UNREADABLE_RECORD: FoundFile(FileState.SYMLINK),
        StaleUnknownReason.EXCLUDE_CHANGED: manifest_record(["old.py"], excludes=[*EXCLUDES, "*.log"]),
    }
    for code, record in cases.items():
        result = report(record)
        assert result.stale_uploads_known is False
        assert (result.stale_uploads, result.stale_upload_paths) == (0, [])
        assert result.stale_uploads_unknown_code is code
        assert result.stale_uploads_unknown_reason == code.message
    assert report(FoundFile(FileState.OK, data=b"{broken")).stale_uploads_unknown_code is (
        StaleUnknownReason.UNREADABLE_RECORD
    )


def test_cap_omits_lists_keeps_counts_and_the_code_stays_out_of_the_wire_shape() -> None:
    result = report(manifest_record(["a", "b", "old.py"]), max_paths=1)
    assert (result.mirror_delete_candidates, result.mirror_delete_candidate_paths) == (2, [])
    assert result.mirror_delete_candidate_paths_omitted is True
    assert (result.stale_uploads, result.stale_upload_paths, result.stale_upload_paths_omitted) == (3, [], True)
    assert "stale_uploads_unknown_code" not in result.model_dump()
