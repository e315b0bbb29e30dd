"""``RsyncBackend``: a mount's local tree copied to the cluster with rsync over the profile's SSH."""

from __future__ import annotations

import asyncio
import logging
import os
import posixpath
import re
import shutil
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from svc_host.plugin import (
    CLAIM_LISTING_LIMIT,
    DELETED_PATHS_CAP,
    MANIFEST_FILE,
    OWNER_FILE,
    SYNC_LOCK_WAIT,
    InspectReport,
    Mount,
    OwnerMarker,
    ProcessStarts,
    SlurmTransport,
    SSHProfile,
    SvcPaths,
    SyncBackend,
    SyncError,
    SyncResult,
    UploadRecord,
    cap_paths,
    claim_mount,
    machine_id,
    sync_excludes,
    sync_lock,
)
from svc_plugin_rsync.argv import remote_dir, rsync_argv
from svc_plugin_rsync.inspection import build_report
from svc_plugin_rsync.itemize import Summary, parse_line
from svc_plugin_rsync.remote import RemoteFiles

log = logging.getLogger(__name__)

MIN_RSYNC = (3, 0)
_EXIT_VANISHED = 24
_EXIT_MAX_DELETE = 25
_EXIT_SSH = 255
# Variables that would change how rsync reaches or quotes for the remote behind svc's back.
_RSYNC_ENV = ("RSYNC_RSH", "RSYNC_OLD_ARGS", "RSYNC_PROTECT_ARGS", "RSYNC_CONNECT_PROG")


class RsyncBackend(SyncBackend):
    """Syncs the mounts of one SSH profile. svc's own remote files are read and written by commands ``transport``
    (the profile's) runs on the connection it holds; rsync itself runs ``ssh`` with the profile's settings.

    The files on the remote, the claim, the lock and the excludes (``sync_excludes``: svc's defaults, the mount's
    ``exclude`` and its trusted project file's, read at every call) are the public sync-backend protocol's, so
    another backend on the same profile reads and keeps them. ``state_dir`` (default svc's state directory) holds
    the lock files and, on machines without ``/etc/machine-id``, the machine id; ``machine_id`` overrides that id;
    ``rsync`` is the local program; ``remote_rsync`` the cluster's, a command line for the remote shell like
    rsync's ``--rsync-path`` (operator configuration, never user input); ``lock_wait`` how many seconds a sync
    waits for another sync of the same mount before it fails naming the holder.
    """

    def __init__(
        self,
        profile_name: str,
        profile: SSHProfile,
        *,
        transport: SlurmTransport,
        state_dir: Path | None = None,
        machine_id: str | None = None,
        rsync: str = "rsync",
        remote_rsync: str = "rsync",
        lock_wait: float = SYNC_LOCK_WAIT,
    ) -> None:
        self.profile_name = profile_name
        self.profile = profile
        self.state_dir = state_dir or SvcPaths.from_env().state_dir
        self.rsync = rsync
        self.remote_rsync = remote_rsync
        self.lock_wait = lock_wait
        self._machine_id = machine_id
        self._files = RemoteFiles(profile_name, profile, transport)
        self._processes = ProcessStarts()
        self._local_ok = False
        self._remote_ok = False

    # -- public API ---------------------------------------------------------------------------------

    def excludes(self, mount: Mount) -> list[str]:
        """The patterns a sync of ``mount`` never uploads nor deletes."""
        return sync_excludes(mount)

    def lock(self, mount: Mount) -> AbstractAsyncContextManager[None]:
        return sync_lock(self.profile_name, mount.name, state_dir=self.state_dir, wait=self.lock_wait)

    @property
    def machine_id(self) -> str:
        if self._machine_id is None:
            self._machine_id = machine_id(self.state_dir)
        return self._machine_id

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
        local = self._local_dir(mount)
        excludes = self.excludes(mount)
        await self._check_rsync()
        remote = remote_dir(mount.remote)
        async with self.lock(mount):
            marker, record, entries, real, home = await asyncio.gather(
                self._files.read(posixpath.join(remote, OWNER_FILE), limit=OwnerMarker.max_bytes),
                self._files.read(posixpath.join(remote, MANIFEST_FILE), limit=UploadRecord.max_bytes),
                self._files.entries(remote, limit=CLAIM_LISTING_LIMIT),
                self._files.realpath(remote),
                self._files.realpath("."),
            )
            writes_marker = claim_mount(
                profile=self.profile_name, mount=mount.name, remote=remote, marker=marker, entries=entries,
                real_remote=real, home=home, machine=self.machine_id, force=force, adopt=adopt, delete=delete,
                dry_run=dry_run,
            )  # fmt: skip
            previous = UploadRecord.previous(record, mount=mount.name)

            def argv(*, dry: bool, limit: int | None = None) -> list[str]:
                return rsync_argv(
                    self.profile, str(local), mount.remote, excludes=excludes, dry_run=dry, delete=delete,
                    max_delete=limit, rsync=self.rsync, remote_rsync=self.remote_rsync,
                )  # fmt: skip

            preflight: Summary | None = None
            if delete:
                preflight = await self._run(argv(dry=True), progress if dry_run else None)
                if len(preflight.deleted) > max_delete:
                    raise SyncError(
                        f"mirror of mount {mount.name!r} refused, nothing changed: {len(preflight.deleted)} entries "
                        f"would be deleted on the cluster, more than max_delete={max_delete}; review them with "
                        "inspect_mount, then raise max_delete or sync without delete"
                    )
            if dry_run:
                summary = preflight if preflight is not None else await self._run(argv(dry=True), progress)
                return self._result(mount, summary, dry_run=True, delete=delete)

            await self._files.makedirs(remote)
            if writes_marker:
                marker_bytes = OwnerMarker.new(self.machine_id).dump()
                await self._files.write_atomic(posixpath.join(remote, OWNER_FILE), marker_bytes)
            summary = await self._run(argv(dry=False, limit=max_delete), progress)
            updated = UploadRecord.after_sync(
                previous, listed=summary.listed, deleted=summary.deleted, excludes=excludes, machine=self.machine_id
            )
            await self._files.write_atomic(posixpath.join(remote, MANIFEST_FILE), updated.dump())
            return self._result(mount, summary, dry_run=False, delete=delete)

    async def inspect(self, mount: Mount, *, max_paths: int = 1000) -> InspectReport:
        if max_paths < 0:
            raise SyncError(f"max_paths must be >= 0 (got {max_paths})")
        local = self._local_dir(mount)
        excludes = self.excludes(mount)
        await self._check_rsync()
        remote = remote_dir(mount.remote)
        argv = rsync_argv(
            self.profile, str(local), mount.remote, excludes=excludes, dry_run=True, delete=True,
            rsync=self.rsync, remote_rsync=self.remote_rsync,
        )  # fmt: skip
        summary, record = await asyncio.gather(
            self._run(argv, None),
            self._files.read(posixpath.join(remote, MANIFEST_FILE), limit=UploadRecord.max_bytes),
        )
        return build_report(
            profile=self.profile_name,
            mount=mount,
            summary=summary,
            record=record,
            excludes=excludes,
            max_paths=max_paths,
        )

    async def close(self) -> None:
        await self._processes.close()  # the transport is the host's: it closes it

    # -- checks -------------------------------------------------------------------------------------

    def _local_dir(self, mount: Mount) -> Path:
        path = Path(mount.local).expanduser()
        if not path.is_dir():
            raise SyncError(
                f"local directory {mount.local!r} of mount {mount.name!r} does not exist or is not a directory; "
                "create it or fix the mount"
            )
        return path.resolve()

    async def _check_rsync(self) -> None:
        """rsync present and recent enough here, and runnable on the cluster (checked once per instance)."""
        if not self._local_ok:
            exe = shutil.which(self.rsync)
            if exe is None:
                raise SyncError(
                    f"rsync is not installed on this machine ({self.rsync!r} not found on PATH); install it, "
                    "e.g. `apt install rsync`, `dnf install rsync` or `brew install rsync`"
                )
            proc = await self._processes.start(
                [exe, "--version"], stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
            )
            out, _ = await proc.communicate()
            found = re.search(rb"rsync\s+version\s+v?(\d+)\.(\d+)", out)
            if found is None or (int(found[1]), int(found[2])) < MIN_RSYNC:
                first = out.decode(errors="replace").strip().splitlines()[:1]
                raise SyncError(
                    f"rsync on this machine is {first[0] if first else 'unknown'!r}; svc needs rsync >= 3.0 "
                    "(openrsync lacks the options svc uses), e.g. `brew install rsync`"
                )
            self._local_ok = True
        if not self._remote_ok:
            await self._files.check_rsync(self.remote_rsync)
            self._remote_ok = True

    # -- rsync --------------------------------------------------------------------------------------

    async def _run(self, argv: list[str], progress: Callable[[int], None] | None) -> Summary:
        """Run rsync, parsing its items as they stream; ``SyncError`` on failure."""
        env = {key: value for key, value in os.environ.items() if key not in _RSYNC_ENV}
        proc = await self._processes.start(
            argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            limit=1 << 20,
        )
        assert proc.stdout is not None  # noqa: S101  (PIPE above)
        assert proc.stderr is not None  # noqa: S101  (PIPE above)
        stderr_task = asyncio.ensure_future(proc.stderr.read())
        summary = Summary()
        try:
            async for line in proc.stdout:
                item = parse_line(line)
                if item is None:
                    continue
                summary.add(item)
                if progress is not None and item.transferred:
                    progress(len(summary.transferred))
            summary.finish()
            code = await proc.wait()
            stderr = (await stderr_task).decode(errors="replace")
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            stderr_task.cancel()
        if code == _EXIT_VANISHED:
            log.warning("rsync: some local files vanished during the transfer: %s", stderr.strip()[-500:])
        elif code != 0:
            raise self._rsync_error(argv, code, stderr)
        return summary

    def _rsync_error(self, argv: list[str], code: int, stderr: str) -> SyncError:
        where = f"profile {self.profile_name!r}"
        if code in (12, 127) and ("command not found" in stderr or "No such file or directory" in stderr):
            message = f"rsync is not available on the cluster side ({where}); install rsync there"
        elif code == _EXIT_MAX_DELETE:
            message = (
                "rsync stopped deleting at max_delete: the cluster tree changed after the preflight; "
                "the remaining deletions were skipped, inspect the mount and sync again"
            )
        elif code == _EXIT_SSH:
            message = f"rsync could not reach the cluster over SSH ({where}); check host, key and known_hosts"
        else:
            message = f"rsync failed for {where}"
        return SyncError(message, argv=argv, exit_code=code, stderr=stderr)

    def _result(self, mount: Mount, summary: Summary, *, dry_run: bool, delete: bool) -> SyncResult:
        paths, omitted = cap_paths(summary.deleted, DELETED_PATHS_CAP)
        sent, sent_omitted = cap_paths(summary.transferred, DELETED_PATHS_CAP)
        return SyncResult(
            profile=self.profile_name,
            mount=mount.name,
            local=mount.local,
            remote=mount.remote,
            dry_run=dry_run,
            delete=delete,
            files_transferred=len(summary.transferred),
            transferred_paths=sent,
            transferred_paths_omitted=sent_omitted,
            entries_deleted=len(summary.deleted),
            deleted_paths=paths,
            deleted_paths_omitted=omitted,
            mirror_candidates_inspected=delete,
        )
