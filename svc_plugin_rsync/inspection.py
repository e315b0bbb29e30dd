"""Turn one ``rsync --dry-run --delete -ii`` pass and the upload record into an ``InspectReport`` (pure)."""

from __future__ import annotations

from svc_host.plugin import FoundFile, InspectReport, Mount, cap_paths, stale_uploads
from svc_plugin_rsync.itemize import Summary


def build_report(
    *, profile: str, mount: Mount, summary: Summary, record: FoundFile, excludes: list[str], max_paths: int
) -> InspectReport:
    """The report for ``mount``: transfers and mirror candidates from ``summary``, stale uploads from ``record``.

    ``summary`` must come from a dry run with ``--delete`` and ``-ii``, so it lists every local entry and
    every remote entry a mirror would delete; the same pass answers both questions.
    """
    stale, reason = stale_uploads(record, excludes=excludes, local=summary.listed)
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
