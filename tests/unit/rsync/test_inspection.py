"""Building the inspect report from one dry-run summary and the upload record."""

from __future__ import annotations

from datetime import UTC, datetime

from svc_host.domain.profiles import Mount
from svc_host.transports.sync_backend import InspectReport, StaleUnknownReason
from svc_plugin_rsync.excludes import effective_excludes, exclude_hash
from svc_plugin_rsync.inspection import build_report
from svc_plugin_rsync.itemize import Summary
from svc_plugin_rsync.manifest import Manifest, dump
from svc_plugin_rsync.remote import Record, RecordState

MOUNT = Mount(name="proj", local="/home/ada/proj", remote="~/proj")
EXCLUDES = effective_excludes()
SUMMARY = Summary(transferred=["new.py"], deleted=["job.out", "old.py"], listed=["keep.py", "new.py"])


def manifest_record(paths: list[str], excludes: list[str] = EXCLUDES) -> Record:
    manifest = Manifest(exclude_hash=exclude_hash(excludes), updated_at=datetime.now(UTC), paths=paths)
    return Record(RecordState.OK, data=dump(manifest))


def report(record: Record, max_paths: int = 1000) -> InspectReport:
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
        StaleUnknownReason.NO_RECORD: Record(RecordState.MISSING),
        StaleUnknownReason.FOREIGN_RECORD: Record(RecordState.FOREIGN),
        StaleUnknownReason.UNREADABLE_RECORD: Record(RecordState.SYMLINK),
        StaleUnknownReason.EXCLUDE_CHANGED: manifest_record(["old.py"], excludes=[*EXCLUDES, "*.log"]),
    }
    for code, record in cases.items():
        result = report(record)
        assert result.stale_uploads_known is False
        assert (result.stale_uploads, result.stale_upload_paths) == (0, [])
        assert result.stale_uploads_unknown_code is code
        assert result.stale_uploads_unknown_reason == code.message
    assert report(Record(RecordState.OK, data=b"{broken")).stale_uploads_unknown_code is (
        StaleUnknownReason.UNREADABLE_RECORD
    )


def test_cap_omits_lists_keeps_counts_and_the_code_stays_out_of_the_wire_shape() -> None:
    result = report(manifest_record(["a", "b", "old.py"]), max_paths=1)
    assert (result.mirror_delete_candidates, result.mirror_delete_candidate_paths) == (2, [])
    assert result.mirror_delete_candidate_paths_omitted is True
    assert (result.stale_uploads, result.stale_upload_paths, result.stale_upload_paths_omitted) == (3, [], True)
    assert "stale_uploads_unknown_code" not in result.model_dump()
