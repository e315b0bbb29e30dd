"""The workflow list's entry for one file, computed once per file content.

Listing the workflows parses and checks every file; a file's entry depends only on its name and its text, so it
is kept under a digest of the text and found again while the file holds the same bytes: an edit (by svc or by
hand) is a new digest, and that file alone is checked again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from svc_host.settings.file_memo import FileMemo
from svc_host.workflows.load import check_workflow

_ENTRIES: FileMemo[dict[str, Any]] = FileMemo(size=512)


def summary(name: str, text: str) -> dict[str, Any]:
    """``{name, workflow_name, job_count, job_names, valid, errors?}`` of the workflow ``name`` holding ``text``."""
    key = (name, hashlib.blake2b(text.encode(errors="surrogatepass"), digest_size=16).digest())
    entry = _ENTRIES.get(key)
    if entry is None:
        entry = _checked(name, text)
        _ENTRIES.put(key, entry, ())
    return {field: list(value) if isinstance(value, list) else value for field, value in entry.items()}


def _checked(name: str, text: str) -> dict[str, Any]:
    workflow, problems = check_workflow(text)
    entry: dict[str, Any] = {"name": name, "workflow_name": None, "job_count": 0, "job_names": [], "valid": False}
    if workflow is not None:
        entry.update(
            workflow_name=workflow.name,
            job_count=len(workflow.jobs),
            job_names=[job.name for job in workflow.jobs],
        )
    entry["valid"] = workflow is not None and not problems
    if problems:
        entry["errors"] = problems
    return entry
