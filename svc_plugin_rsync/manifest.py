"""The upload record ``<mount.remote>/.svc-manifest.json``: model, parsing and merge rules (pure).

The record lists the relative paths svc has put on the remote (names only, directories ending in
``/``), with the fingerprint of the exclude filter they were synced under. It is rewritten after every
successful real sync: the paths of that sync are added to the previous record and the paths it deleted
are dropped, so a path stays recorded after it disappears locally ("stale upload") until a mirror
removes it. A record written under another exclude filter is not merged: paths excluded now cannot be
told from paths deleted locally, so the record restarts from the current tree.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from svc_host.plugin import StaleUnknownReason

MANIFEST_VERSION = 1
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
"""A larger record is treated as unreadable rather than loaded into memory."""


class ManifestError(ValueError):
    """The bytes are not a record this version of svc can read."""


class Manifest(BaseModel):
    """One mount's upload record."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    version: int = MANIFEST_VERSION
    exclude_hash: str
    exclude_patterns: list[str] = Field(default_factory=list)
    updated_at: datetime
    updated_by: str = ""
    """The owner id of the machine that wrote it (see ``owner.py``)."""
    paths: list[str] = Field(default_factory=list)


def parse(data: bytes) -> Manifest:
    """The record in ``data``; ``ManifestError`` when it is not valid JSON of a known version."""
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise ManifestError("not a JSON object")
    if raw.get("version") != MANIFEST_VERSION:
        raise ManifestError(f"unknown version {raw.get('version')!r}")
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise ManifestError(str(exc)) from exc


def dump(manifest: Manifest) -> bytes:
    """The record as JSON; ``ensure_ascii`` keeps any odd name (even lone surrogates) representable."""
    return (json.dumps(manifest.model_dump(mode="json"), indent=1, ensure_ascii=True) + "\n").encode()


def merge(
    previous: Manifest | None,
    *,
    listed: Iterable[str],
    deleted: Iterable[str],
    exclude_hash: str,
    exclude_patterns: list[str],
    now: datetime,
    updated_by: str = "",
) -> Manifest:
    """The record after a successful sync that listed ``listed`` and deleted ``deleted``.

    ``previous`` counts only when it was written under the same exclude filter; otherwise (or when
    there was none, or it could not be read) the record starts from this sync's paths.
    """
    paths = set(previous.paths) if previous is not None and previous.exclude_hash == exclude_hash else set()
    paths.update(listed)
    paths.difference_update(deleted)
    return Manifest(
        exclude_hash=exclude_hash,
        exclude_patterns=list(exclude_patterns),
        updated_at=now,
        updated_by=updated_by,
        paths=sorted(paths),
    )


def stale_paths(manifest: Manifest, local: Iterable[str]) -> list[str]:
    """Recorded paths absent from the local tree (``local``: every non-excluded local entry)."""
    present = set(local)
    return [path for path in manifest.paths if path not in present]


def unknown_reason(manifest: Manifest | None, exclude_hash: str) -> StaleUnknownReason | None:
    """Why stale uploads cannot be determined from a readable ``manifest`` (None: they can)."""
    if manifest is None:
        return StaleUnknownReason.NO_RECORD
    if manifest.exclude_hash != exclude_hash:
        return StaleUnknownReason.EXCLUDE_CHANGED
    return None
