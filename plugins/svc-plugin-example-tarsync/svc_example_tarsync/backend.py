"""``TarSyncBackend``: svc's sync contract kept with ``find``, ``tar`` and ``rm``, run by the profile's transport.

Everything svc-specific (the claim, the upload record, the lock, the excludes, what may be read) comes from
svc's sync-backend protocol helpers, and the way onto the login node is the profile's transport (its one SSH
connection, reconnected by svc); this module only moves bytes. Every remote command is an argv list, and every
path crosses as an argument or on stdin, never inside shell code.
"""

from __future__ import annotations

import asyncio
import io
import posixpath
import tarfile
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from svc_host.plugin import (
    CLAIM_LISTING_LIMIT,
    DELETED_PATHS_CAP,
    MANIFEST_FILE,
    OWNER_FILE,
    FileState,
    FoundFile,
    InspectReport,
    Mount,
    OwnerMarker,
    SlurmTransport,
    SSHProfile,
    SyncBackend,
    SyncError,
    SyncResult,
    TransportError,
    UploadRecord,
    cap_paths,
    claim_mount,
    cluster_root,
    machine_id,
    ssh_exec_files,
    stale_uploads,
    sync_excludes,
    sync_lock,
    temporary_name,
)

from svc_example_tarsync.plan import Plan, Tree, local_tree, parse_listing, plan

# One listing line per entry: type, size, mtime, path relative to the mount (NUL-terminated: names may hold anything).
_LISTING = 'case $1 in -*) set -- "./$1";; esac; [ -d "$1" ] || exit 3; find "$1" -mindepth 1 -printf "%y %s %T@ %P\\0"'
_MKDIR = 'case $1 in -*) set -- "./$1";; esac; mkdir -p -- "$1"'
_EXTRACT = 'case $1 in -*) set -- "./$1";; esac; tar -x -f - -C "$1"'
_DELETE = 'case $1 in -*) set -- "./$1";; esac; cd -- "$1" && xargs -0 -r rm -f -- && exit 0'
_RMDIR = 'case $1 in -*) set -- "./$1";; esac; cd -- "$1" && xargs -0 -r rmdir -- && exit 0'
SEND_TIMEOUT = 600.0
"""Seconds one ``tar -x`` of a sync's changed files may take (other commands take the transport's own limit)."""


class TarSyncBackend(SyncBackend):
    """Syncs the mounts of one SSH profile with tar, through the profile's ``transport``."""

    def __init__(
        self, profile_name: str, profile: SSHProfile, *, transport: SlurmTransport, state_dir: Path | None = None
    ) -> None:
        self.profile_name = profile_name
        self.profile = profile
        self.transport = transport
        self.state_dir = state_dir

    def lock(self, mount: Mount) -> AbstractAsyncContextManager[None]:
        return sync_lock(self.profile_name, mount.name, state_dir=self.state_dir)

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
        if max_delete < 1:
            raise SyncError(f"max_delete must be >= 1 (got {max_delete}): it caps how many entries a mirror deletes")
        local, remote, excludes = self._local_dir(mount), self._remote_dir(mount), sync_excludes(mount)
        machine = machine_id(self.state_dir)
        async with self.lock(mount):
            uid = await self._uid()
            marker, record, real, home = await asyncio.gather(
                self._read(posixpath.join(remote, OWNER_FILE), OwnerMarker.max_bytes, uid),
                self._read(posixpath.join(remote, MANIFEST_FILE), UploadRecord.max_bytes, uid),
                self._real_path(remote),
                self._real_path("."),
            )
            there = await self._listing(remote) if real is not None else {}
            top = [path for path in there if "/" not in path][:CLAIM_LISTING_LIMIT]
            writes_marker = claim_mount(
                profile=self.profile_name, mount=mount.name, remote=remote, marker=marker,
                entries=top if real is not None else None, real_remote=real, home=home, machine=machine,
                force=force, adopt=adopt, delete=delete, dry_run=dry_run,
            )  # fmt: skip
            previous = UploadRecord.previous(record, mount=mount.name)
            todo = plan(local_tree(local, excludes), there, delete=delete, excludes=excludes)
            if delete and len(todo.delete) > max_delete:
                raise SyncError(
                    f"mirror of mount {mount.name!r} refused, nothing changed: {len(todo.delete)} entries would be "
                    f"deleted on the cluster, more than max_delete={max_delete}; review them with inspect_mount, "
                    "then raise max_delete or sync without delete"
                )
            if not dry_run:
                await self._check(["sh", "-c", _MKDIR, "tarsync", remote], "mkdir -p")
                if writes_marker:
                    await self._write(posixpath.join(remote, OWNER_FILE), OwnerMarker.new(machine).dump())
                await self._delete(remote, todo.delete)
                await self._send(local, remote, todo, progress)
                updated = UploadRecord.after_sync(
                    previous, listed=todo.listed, deleted=todo.delete, excludes=excludes,
                    machine=machine,
                )  # fmt: skip
                await self._write(posixpath.join(remote, MANIFEST_FILE), updated.dump())
        sent, sent_omitted = cap_paths(todo.transferred, DELETED_PATHS_CAP)
        deleted, deleted_omitted = cap_paths(todo.delete, DELETED_PATHS_CAP)
        return SyncResult(
            profile=self.profile_name, mount=mount.name, local=mount.local, remote=mount.remote, dry_run=dry_run,
            delete=delete, files_transferred=len(todo.transferred), transferred_paths=sent,
            transferred_paths_omitted=sent_omitted, entries_deleted=len(todo.delete), deleted_paths=deleted,
            deleted_paths_omitted=deleted_omitted, mirror_candidates_inspected=delete,
        )  # fmt: skip

    async def inspect(self, mount: Mount, *, max_paths: int = 1000) -> InspectReport:
        if max_paths < 0:
            raise SyncError(f"max_paths must be >= 0 (got {max_paths})")
        local, remote, excludes = self._local_dir(mount), self._remote_dir(mount), sync_excludes(mount)
        record = await self._read(posixpath.join(remote, MANIFEST_FILE), UploadRecord.max_bytes, await self._uid())
        todo = plan(local_tree(local, excludes), await self._listing(remote), delete=True, excludes=excludes)
        stale, reason = stale_uploads(record, excludes=excludes, local=todo.listed)
        candidates, candidates_omitted = cap_paths(todo.delete, max_paths)
        stale_shown, stale_omitted = cap_paths(stale, max_paths)
        return InspectReport(
            profile=self.profile_name, mount=mount.name, local=mount.local, remote=mount.remote,
            files_would_transfer=len(todo.transferred), mirror_delete_candidates=len(todo.delete),
            mirror_delete_candidate_paths=candidates, mirror_delete_candidate_paths_omitted=candidates_omitted,
            stale_uploads_known=reason is None, stale_uploads=len(stale), stale_upload_paths=stale_shown,
            stale_upload_paths_omitted=stale_omitted, stale_uploads_unknown_reason=reason.message if reason else "",
            stale_uploads_unknown_code=reason, effective_exclude_patterns=excludes,
        )  # fmt: skip

    async def close(self) -> None:
        """Nothing to close: the transport is svc's."""

    # -- local and remote directories ---------------------------------------------------------------

    def _local_dir(self, mount: Mount) -> Path:
        path = Path(mount.local).expanduser()
        if not path.is_dir():
            raise SyncError(
                f"local directory {mount.local!r} of mount {mount.name!r} does not exist or is not a directory"
            )
        return path.resolve()

    def _remote_dir(self, mount: Mount) -> str:
        try:
            return cluster_root(mount.remote)
        except ValueError as exc:
            raise SyncError(str(exc)) from None

    # -- remote commands ----------------------------------------------------------------------------

    async def _run(
        self, argv: list[str], stdin: bytes | None = None, *, changes: bool = False, timeout: float | None = None
    ) -> tuple[int, bytes, str]:
        """Exit status, stdout and stderr of ``argv`` on the login node; a command that ``changes`` files is never
        run twice (after a dropped connection svc reports it instead)."""
        try:
            done = await self.transport.run_bytes(argv, stdin=stdin, timeout=timeout, idempotent=not changes)
        except TransportError as exc:
            raise SyncError(str(exc)) from exc
        return done.exit_code, done.stdout, done.stderr

    async def _check(
        self, argv: list[str], what: str, stdin: bytes | None = None, *, timeout: float | None = None
    ) -> bytes:
        code, out, err = await self._run(argv, stdin, changes=True, timeout=timeout)
        if code != 0:
            raise SyncError(f"{what} failed on profile {self.profile_name!r}", argv=argv, exit_code=code, stderr=err)
        return out

    async def _uid(self) -> int:
        code, out, err = await self._run(["id", "-u"])
        if code != 0 or not out.strip().isdigit():
            raise SyncError(f"id -u failed on profile {self.profile_name!r}", exit_code=code, stderr=err)
        return int(out)

    async def _real_path(self, path: str) -> str | None:
        code, out, err = await self._run(ssh_exec_files.real_path_argv(path))
        if code == ssh_exec_files.MISSING:
            return None
        if code != 0:
            raise SyncError(f"cannot resolve {path!r} on profile {self.profile_name!r}: {err.strip()}")
        return out.decode(errors="surrogateescape").rstrip("\n")

    async def _read(self, path: str, limit: int, uid: int) -> FoundFile:
        """One of svc's files, never through a symlink nor of another account (``FoundFile.checked``)."""
        code, out, err = await self._run(ssh_exec_files.own_file_argv(path, limit))
        if code == ssh_exec_files.MISSING:
            return FoundFile(FileState.MISSING)
        try:
            if code != 0:
                raise ValueError(err.strip())
            facts, data = ssh_exec_files.parse_own_file(out)
        except ValueError as exc:
            return FoundFile(FileState.UNREADABLE, detail=str(exc))
        return FoundFile.checked(mode=facts.mode, uid=facts.uid, size=facts.size, my_uid=uid, limit=limit, data=data)

    async def _write(self, path: str, data: bytes) -> None:
        await self._check(ssh_exec_files.write_replacing_argv(temporary_name(path), path), f"writing {path!r}", data)

    async def _listing(self, remote: str) -> Tree:
        code, out, err = await self._run(["sh", "-c", _LISTING, "tarsync", remote])
        if code == ssh_exec_files.MISSING:
            return {}
        if code != 0:
            raise SyncError(f"cannot list {remote!r} on profile {self.profile_name!r}", exit_code=code, stderr=err)
        return parse_listing(out)

    async def _delete(self, remote: str, paths: list[str]) -> None:
        """Files first, then directories deepest first (``rmdir``: what they held went just before)."""
        files = [path for path in paths if not path.endswith("/")]
        dirs = sorted((path.rstrip("/") for path in paths if path.endswith("/")), key=lambda p: -p.count("/"))
        for script, names in ((_DELETE, files), (_RMDIR, dirs)):
            if names:
                stdin = b"".join(name.encode(errors="surrogateescape") + b"\0" for name in names)
                await self._check(["sh", "-c", script, "tarsync", remote], "deleting", stdin)

    async def _send(self, local: Path, remote: str, todo: Plan, progress: Callable[[int], None] | None) -> None:
        buffer, sent = io.BytesIO(), 0
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
            for path in todo.send:
                tar.add(local / path.rstrip("/"), arcname=path.rstrip("/"), recursive=False)
                if progress is not None and not path.endswith("/"):
                    sent += 1
                    progress(sent)
        if todo.send:
            await self._check(
                ["sh", "-c", _EXTRACT, "tarsync", remote], "tar -x", buffer.getvalue(), timeout=SEND_TIMEOUT
            )
