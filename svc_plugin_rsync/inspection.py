"""Turn one ``rsync --dry-run --delete -ii`` pass and the upload record into an ``InspectReport`` (pure)."""

from __future__ import annotations

from svc_host.plugin import InspectReport, Mount, StaleUnknownReason, cap_paths
from svc_plugin_rsync import manifest as manifest_rules
from svc_plugin_rsync.excludes import exclude_hash
from svc_plugin_rsync.itemize import Summary
from svc_plugin_rsync.remote import Record, RecordState

_RECORD_REASONS = {
    RecordState.MISSING: StaleUnknownReason.NO_RECORD,
    RecordState.FOREIGN: StaleUnknownReason.FOREIGN_RECORD,
    RecordState.SYMLINK: StaleUnknownReason.UNREADABLE_RECORD,
    RecordState.UNREADABLE: StaleUnknownReason.UNREADABLE_RECORD,
}


def build_report(
    *, profile: str, mount: Mount, summary: Summary, record: Record, excludes: list[str], max_paths: int
) -> InspectReport:
    """The report for ``mount``: transfers and mirror candidates from ``summary``, stale uploads from ``record``.

    ``summary`` must come from a dry run with ``--delete`` and ``-ii``, so it lists every local entry and
    every remote entry a mirror would delete; the same pass answers both questions.
    """
    reason: StaleUnknownReason | None
    stale: list[str] = []
    if record.state is RecordState.OK:
        try:
            manifest = manifest_rules.parse(record.data)
        except manifest_rules.ManifestError:
            reason = StaleUnknownReason.UNREADABLE_RECORD
        else:
            reason = manifest_rules.unknown_reason(manifest, exclude_hash(excludes))
            if reason is None:
                stale = manifest_rules.stale_paths(manifest, summary.listed)
    else:
        reason = _RECORD_REASONS[record.state]
    candidates, candidates_omitted = cap_paths(summary.deleted, max_paths)
    stale_listed, stale_omitted = cap_paths(stale, max_paths)
    return InspectReport(
        profile=profile,
        mount=mount.name,
        local=mount.local,
        remote=mount.remote,
        files_would_transfer=len(summary.transferred),
        mirror_delete_candidates=len(summary.deleted),
        mirror_delete_candidate_paths=candidates,
        mirror_delete_candidate_paths_omitted=candidates_omitted,
        stale_uploads_known=reason is None,
        stale_uploads=len(stale),
        stale_upload_paths=stale_listed,
        stale_upload_paths_omitted=stale_omitted,
        stale_uploads_unknown_reason=reason.message if reason is not None else "",
        stale_uploads_unknown_code=reason,
        effective_exclude_patterns=excludes,
    )
