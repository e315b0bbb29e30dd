"""The contract every sync backend implements: copy a mount's local tree to the cluster, report what that would do.

A backend is built per SSH profile by the factory of its ``SyncBackendSpec``
(``factory(profile_name, profile) -> SyncBackend``). The host calls :meth:`SyncBackend.sync` for
``sync_files`` and :meth:`SyncBackend.inspect` for ``inspect_mount``; the returned models are those
tools' return objects without ``success``. Expected failures raise :class:`svc_host.errors.SyncError`.
A backend never uploads nor deletes what ``sync_excludes`` names for the mount (``DEFAULT_EXCLUDES`` and
:func:`user_excludes`), and keeps svc's files on the remote as docs/plugins/sync-backends.md describes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from svc_host.domain.profiles import Mount
from svc_host.errors import ConfigError

DELETED_PATHS_CAP = 1000
"""Above this many deletions ``deleted_paths`` is omitted (``deleted_paths_omitted``); the count stays exact.
The same cap applies to ``transferred_paths``."""


class StaleUnknownReason(StrEnum):
    """Why an inspection cannot tell which uploads went stale."""

    NO_RECORD = "no_record"
    UNREADABLE_RECORD = "unreadable_record"
    FOREIGN_RECORD = "foreign_record"
    EXCLUDE_CHANGED = "exclude_changed"

    @property
    def message(self) -> str:
        """The sentence shown to people and agents."""
        return _MESSAGES[self]


_MESSAGES = {
    StaleUnknownReason.NO_RECORD: "nothing recorded yet: no sync of this mount has completed",
    StaleUnknownReason.UNREADABLE_RECORD: "the upload record is unreadable (damaged, not a regular file, or a symlink)",
    StaleUnknownReason.FOREIGN_RECORD: "the upload record is owned by another account, so it was not read",
    StaleUnknownReason.EXCLUDE_CHANGED: "the exclude filter changed since the upload record was written; "
    "the next sync starts a new record",
}


class SyncResult(BaseModel):
    """What a sync did (or, for a dry run, would do). The ``sync_files`` return without ``success``.

    ``files_transferred`` counts non-directory entries sent, ``transferred_paths`` names them (relative to the
    mount). ``entries_deleted`` counts files and directories (a directory holding two files counts three); on a
    dry run all of these are what would happen. ``transferred_paths`` is empty while ``files_transferred`` is not
    past the cap (``transferred_paths_omitted``) or from a backend that does not list what it sends.
    An additive sync does not look for deletions: ``mirror_candidates_inspected`` is false and
    ``entries_deleted`` 0 then says nothing about stale files.
    """

    model_config = ConfigDict(extra="forbid")

    profile: str
    mount: str
    local: str
    remote: str
    dry_run: bool
    delete: bool
    files_transferred: int = 0
    transferred_paths: list[str] = Field(default_factory=list)
    transferred_paths_omitted: bool = False
    entries_deleted: int = 0
    deleted_paths: list[str] = Field(default_factory=list)
    deleted_paths_omitted: bool = False
    mirror_candidates_inspected: bool = False


class InspectReport(BaseModel):
    """What syncing a mount would change. The ``inspect_mount`` return without ``success``.

    Lists are capped by ``max_paths``: past the cap a list is empty and its ``_omitted`` flag set, while
    the counts stay exact. ``stale_uploads_unknown_reason`` is the human message ('' when known);
    ``stale_uploads_unknown_code`` is the machine-readable code and is left out of serialisation.
    """

    model_config = ConfigDict(extra="forbid")

    profile: str
    mount: str
    local: str
    remote: str
    files_would_transfer: int = 0
    mirror_delete_candidates: int = 0
    mirror_delete_candidate_paths: list[str] = Field(default_factory=list)
    mirror_delete_candidate_paths_omitted: bool = False
    stale_uploads_known: bool = False
    stale_uploads: int = 0
    stale_upload_paths: list[str] = Field(default_factory=list)
    stale_upload_paths_omitted: bool = False
    stale_uploads_unknown_reason: str = ""
    stale_uploads_unknown_code: StaleUnknownReason | None = Field(default=None, exclude=True)
    effective_exclude_patterns: list[str] = Field(default_factory=list)


def user_excludes(mount: Mount) -> list[str]:
    """The exclude patterns the user set for ``mount``: the mount's own ``exclude``, then the ``exclude`` list of
    the project file (``.svc.json``, else ``svc.json``) in its local root when the user trusts that file (``svc
    config trust DIR``), duplicates dropped.

    An untrusted (or since changed) project file is ignored, with the one-line notice every ignored project file
    gets: a cloned repository's file must not spare its paths from a mirror's deletions, nor stop the sync. A
    trusted file that is not valid is a ``ConfigError`` naming it (the sync changes nothing). Backends add
    ``DEFAULT_EXCLUDES`` (``sync_excludes`` does both). Read at every sync and inspection, so an edited file counts
    (once trusted again) at once.
    """
    from svc_host.settings import trust
    from svc_host.settings.config import project_config_file, project_excludes
    from svc_host.settings.files import parse_json_object, read_config_bytes
    from svc_host.settings.paths import SvcPaths

    path = project_config_file(Path(mount.local).expanduser())
    try:
        raw = read_config_bytes(path)
    except ConfigError as exc:  # a FIFO or a directory under the name: a project decides what it is
        trust.announce_unreadable(path, str(exc))
        raw = None
    found: list[str] = []
    if raw is not None:
        if trust.is_trusted(SvcPaths.from_env(), path, raw):
            found = project_excludes(parse_json_object(path, raw), where=str(path))
        else:
            trust.announce_ignored(path, raw)
    return list(dict.fromkeys([*mount.exclude, *found]))


def cap_paths(paths: Sequence[str], cap: int) -> tuple[list[str], bool]:
    """``(paths, False)`` when at most ``cap`` paths, else ``([], True)``: a list is omitted, never shortened."""
    if len(paths) > cap:
        return [], True
    return list(paths), False


class SyncBackend(ABC):
    """Copies mounts of one SSH profile to its cluster. One instance per profile, reused across calls."""

    @abstractmethod
    async def sync(
        self,
        mount: Mount,
        *,
        dry_run: bool = False,
        delete: bool = False,
        max_delete: int = 100,
        force: bool = False,
        adopt: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> SyncResult:
        """Copy ``mount.local`` to ``mount.remote``; additive unless ``delete``.

        A mirror (``delete=True``) is preflighted with a dry run and refused, changing nothing, when more
        than ``max_delete`` entries would go (``max_delete < 1`` is refused too). ``force`` takes the mount
        over from another machine. A remote directory that already holds files svc has never claimed is
        only claimed with ``adopt``: without it a mirror there is refused, changing nothing, and an additive
        sync copies without claiming. A remote root that is (or contains) the login directory is always
        refused. ``progress`` receives the running count of files transferred.
        Holds :meth:`lock` while it runs (re-entrant for a caller already holding it).
        The files it keeps on the remote, the claim rules and the excludes are svc's sync-backend protocol
        (docs/plugins/sync-backends.md): ``claim_mount``, ``OwnerMarker``, ``UploadRecord``, ``sync_excludes``.
        """

    @abstractmethod
    async def inspect(self, mount: Mount, *, max_paths: int = 1000) -> InspectReport:
        """Report, without changing anything and without the lock, what a sync or mirror would do."""

    @abstractmethod
    def lock(self, mount: Mount) -> AbstractAsyncContextManager[None]:
        """The mount's sync lock, to hold across "sync then submit": ``async with backend.lock(m): ...``.

        Serialises tasks and processes on this machine. Re-entrant for the task holding it and the tasks it
        creates while holding it (a ``ContextVar`` rule, see ``sync_lock``), so :meth:`sync` may be called while
        holding it; ``sync_lock(profile_name, mount.name)`` is this lock, shared by every backend of the profile.
        """

    async def close(self) -> None:  # noqa: B027  (optional hook: backends without connections need nothing)
        """Release connections; the backend may be used again afterwards (it reconnects)."""
