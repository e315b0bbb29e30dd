"""svc's two files in a mount's remote directory, their formats, and how a backend reads them (no I/O).

Every sync backend reads and writes the same files in the same formats (docs/plugins/sync-backends.md), so a
profile may switch backends and keep its claim and its record:

- ``.svc-owner`` (:class:`OwnerMarker`): which machine syncs the mount; see ``claim_mount``.
- ``.svc-manifest.json`` (:class:`UploadRecord`): every path svc has put there, under which exclude filter.

A backend fetches a file itself (its own way: SFTP, a command) and hands what it found to these helpers as a
:class:`FoundFile`: svc reads neither file through a symlink nor one another account owns.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import logging
import os
import socket
import stat
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from svc_host.errors import SyncError
from svc_host.transports.sync_backend import StaleUnknownReason
from svc_host.transports.sync_excludes import MANIFEST_FILE, TEMP_SUFFIX, exclude_hash

log = logging.getLogger(__name__)

MACHINE_ID_FILE = Path("/etc/machine-id")
_APP_KEY = b"svc-owner-v1"


class FileState(StrEnum):
    """What a backend found at the path of one of svc's files."""

    MISSING = "missing"
    OK = "ok"
    SYMLINK = "symlink"
    FOREIGN = "foreign"
    """Owned by another account: not read."""
    UNREADABLE = "unreadable"
    """Not a regular file, too large, or it failed to read."""


@dataclass(frozen=True)
class FoundFile:
    """One of svc's files as a backend found it on the remote: its state, and its bytes when ``OK``."""

    state: FileState
    data: bytes = b""
    detail: str = ""

    @classmethod
    def checked(cls, *, mode: int, uid: int | None, size: int, my_uid: int, limit: int, data: bytes) -> FoundFile:
        """The file whose ``lstat`` gave ``mode``, ``uid`` and ``size``, read as ``data``: ``OK`` only when it is a
        regular file of the remote account ``my_uid`` of at most ``limit`` bytes."""
        if stat.S_ISLNK(mode):
            return cls(FileState.SYMLINK, detail="it is a symlink")
        if not stat.S_ISREG(mode):
            return cls(FileState.UNREADABLE, detail="it is not a regular file")
        if uid != my_uid:
            return cls(FileState.FOREIGN, detail=f"owned by uid {uid}, not {my_uid}")
        if size > limit or len(data) > limit:
            return cls(FileState.UNREADABLE, detail=f"larger than {limit} bytes")
        return cls(FileState.OK, data=data)


def temporary_name(path: str) -> str:
    """Where to write ``path`` before renaming it into place: ``<path>.tmp-<random>`` (``DEFAULT_EXCLUDES`` keeps
    such a leftover out of every sync)."""
    return f"{path}{TEMP_SUFFIX}{uuid.uuid4().hex[:12]}"


def machine_id(state_dir: Path | None = None) -> str:
    """This machine's id as the owner marker records it, safe to store on a shared cluster.

    A keyed hash of ``/etc/machine-id`` (the raw id is meant to stay private), else of ``<state_dir>/machine-id``
    (default: svc's state directory), created once as ``<hostname>-<random uuid>``. Every backend on this machine
    gets the same id, so switching a profile's backend keeps its claim.
    """
    try:
        raw = MACHINE_ID_FILE.read_text().strip()
    except OSError:
        raw = ""
    if not raw:
        if state_dir is None:
            from svc_host.settings.paths import SvcPaths

            state_dir = SvcPaths.from_env().state_dir
        stored = state_dir / "machine-id"
        try:
            raw = stored.read_text().strip()
        except FileNotFoundError:
            raw = ""
        if not raw:
            raw = f"{socket.gethostname()}-{uuid.uuid4().hex}"
            state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = stored.with_name(f"machine-id{TEMP_SUFFIX}{uuid.uuid4().hex}")
            tmp.write_text(raw + "\n")
            os.replace(tmp, stored)
    return hmac.new(_APP_KEY, raw.encode(), hashlib.sha256).hexdigest()[:32]


class OwnerMarker(BaseModel):
    """``.svc-owner``: a JSON object naming the machine that syncs the mount (``machine_id``, from
    :func:`machine_id`); ``hostname`` and ``user`` are for the people reading a refusal."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    max_bytes: ClassVar[int] = 64 * 1024
    """Read at most this much of the file (more is not a marker)."""

    machine_id: str
    hostname: str = ""
    user: str = ""
    claimed_at: datetime

    @classmethod
    def new(cls, machine: str) -> OwnerMarker:
        """The marker this machine writes when it claims a mount."""
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = ""
        return cls(machine_id=machine, hostname=socket.gethostname(), user=user, claimed_at=datetime.now(UTC))

    @classmethod
    def parse(cls, data: bytes) -> OwnerMarker | None:
        """The marker in ``data``, or None when it is not one."""
        try:
            return cls.model_validate(json.loads(data))
        except (ValueError, ValidationError):
            return None

    def dump(self) -> bytes:
        return (json.dumps(self.model_dump(mode="json"), indent=1) + "\n").encode()

    def describe(self) -> str:
        who = f"{self.user}@{self.hostname}" if self.user else self.hostname or "another machine"
        return f"{who} (machine {self.machine_id[:12]}, since {self.claimed_at:%Y-%m-%d %H:%M} UTC)"


class UploadRecord(BaseModel):
    """``.svc-manifest.json``: the relative paths svc has put on the remote (directories ending in ``/``), with
    the exclude filter they were synced under (``version`` 1).

    Rewritten after every successful real sync (:meth:`after_sync`): that sync's paths are added, the paths it
    deleted dropped, so a path stays recorded after it disappears locally ("stale upload") until a mirror
    removes it. A record written under another exclude filter is not merged: paths excluded now cannot be told
    from paths deleted locally, so the record restarts from the current tree.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)
    max_bytes: ClassVar[int] = 64 * 1024 * 1024
    """A larger record is treated as unreadable rather than loaded into memory."""
    version: int = 1
    exclude_hash: str
    exclude_patterns: list[str] = Field(default_factory=list)
    updated_at: datetime
    updated_by: str = ""
    """The ``machine_id`` of the machine that wrote it."""
    paths: list[str] = Field(default_factory=list)

    @classmethod
    def parse(cls, data: bytes) -> UploadRecord:
        """The record in ``data``; ``ValueError`` when it is not valid JSON of version 1."""
        try:
            raw = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not JSON: {exc}") from exc
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        if raw.get("version") != 1:
            raise ValueError(f"unknown version {raw.get('version')!r}")
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(str(exc)) from exc

    def dump(self) -> bytes:
        """The record as JSON; ``ensure_ascii`` keeps any odd name (even lone surrogates) representable."""
        return (json.dumps(self.model_dump(mode="json"), indent=1, ensure_ascii=True) + "\n").encode()

    @classmethod
    def previous(cls, found: FoundFile, *, mount: str) -> UploadRecord | None:
        """The record a sync of ``mount`` merges into: ``None`` when there is none or it is unreadable (the sync
        starts a new one); a ``SyncError`` when it is a symlink (svc does not follow it, nor write through it)."""
        if found.state is FileState.SYMLINK:
            raise SyncError(
                f"mount {mount!r}: the upload record {MANIFEST_FILE} on the cluster is a symlink, which svc "
                "does not follow; remove it and sync again"
            )
        if found.state is not FileState.OK:
            if found.state is not FileState.MISSING:
                log.warning("upload record of mount %r not used (%s); starting a new one", mount, found.detail)
            return None
        try:
            return cls.parse(found.data)
        except ValueError as exc:
            log.warning("upload record of mount %r unreadable (%s); starting a new one", mount, exc)
            return None

    @classmethod
    def after_sync(
        cls,
        previous: UploadRecord | None,
        *,
        listed: Iterable[str],
        deleted: Iterable[str],
        excludes: list[str],
        machine: str,
    ) -> UploadRecord:
        """The record after a successful sync that found ``listed`` (every local entry it did not exclude) and
        deleted ``deleted``; ``previous`` counts only when written under the same ``excludes``."""
        fingerprint = exclude_hash(excludes)
        paths = set(previous.paths) if previous is not None and previous.exclude_hash == fingerprint else set()
        paths.update(listed)
        paths.difference_update(deleted)
        return cls(
            exclude_hash=fingerprint,
            exclude_patterns=list(excludes),
            updated_at=datetime.now(UTC),
            updated_by=machine,
            paths=sorted(paths),
        )


_FOUND_REASONS = {
    FileState.MISSING: StaleUnknownReason.NO_RECORD,
    FileState.FOREIGN: StaleUnknownReason.FOREIGN_RECORD,
    FileState.SYMLINK: StaleUnknownReason.UNREADABLE_RECORD,
    FileState.UNREADABLE: StaleUnknownReason.UNREADABLE_RECORD,
}


def stale_uploads(
    found: FoundFile, *, excludes: list[str], local: Iterable[str]
) -> tuple[list[str], StaleUnknownReason | None]:
    """The recorded paths absent from ``local`` (every local entry not excluded), or ``([], why)`` when the record
    ``found`` cannot tell: for an ``InspectReport``'s ``stale_*`` fields."""
    if found.state is not FileState.OK:
        return [], _FOUND_REASONS[found.state]
    try:
        record = UploadRecord.parse(found.data)
    except ValueError:
        return [], StaleUnknownReason.UNREADABLE_RECORD
    if record.exclude_hash != exclude_hash(excludes):
        return [], StaleUnknownReason.EXCLUDE_CHANGED
    present = set(local)
    return [path for path in record.paths if path not in present], None
