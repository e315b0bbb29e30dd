"""svc's own files on the remote (manifest, owner marker) over one kept-alive asyncssh connection.

Reads never follow a symlink and never read a file another account owns; writes go to a temp file in
the same directory and are renamed into place (rename replaces a symlink itself, never its target).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncssh
from asyncssh.constants import OPEN_REQUEST_SESSION_FAILED

from svc_host.plugin import (
    FileState,
    FoundFile,
    SSHProfile,
    SyncError,
    TransportError,
    open_ssh_connection,
    ssh_exec_files,
    temporary_name,
)

COMMAND_TIMEOUT = 60.0
T = TypeVar("T")
# The kept-alive connection died (server restart, idle drop): reconnect once.
_CONNECTION_LOST = (
    asyncssh.ConnectionLost,
    asyncssh.DisconnectError,
    asyncssh.ChannelOpenError,
    asyncssh.SFTPConnectionLost,
    asyncssh.SFTPNoConnection,
    BrokenPipeError,
    ConnectionResetError,
)


class RemoteFiles:
    """File operations in one profile's remote home over a lazily opened, reused SSH connection: through SFTP,
    or, on a connection whose sshd refused the ``sftp`` subsystem, through commands (``find``, ``realpath``,
    ``head``; :mod:`svc_host.transports.ssh_exec_files`) with the same checks."""

    def __init__(self, profile_name: str, profile: SSHProfile) -> None:
        self.profile_name = profile_name
        self.profile = profile
        self._conn: asyncssh.SSHClientConnection | None = None
        self._sftp: tuple[asyncssh.SSHClientConnection, asyncssh.SFTPClient | None] | None = None
        """The connection's SFTP client, or ``None`` when its sshd refused the subsystem."""
        self._uid: int | None = None
        self._lock = asyncio.Lock()

    @property
    def where(self) -> str:
        host = self.profile.ssh_host or self.profile.hostname
        return f"{self.profile.username}@{host}".lstrip("@") + f" (profile {self.profile_name!r})"

    async def _connection(self) -> asyncssh.SSHClientConnection:
        async with self._lock:
            if self._conn is None or self._conn.is_closed():
                self._sftp = None
                try:
                    self._conn = await open_ssh_connection(self.profile_name, self.profile)
                except TransportError as exc:
                    raise SyncError(str(exc)) from exc
            return self._conn

    async def _sftp_client(self) -> asyncssh.SFTPClient | None:
        """The connection's SFTP client, started once; ``None`` when the sshd refuses the subsystem."""
        conn = await self._connection()
        async with self._lock:
            if self._sftp is None or self._sftp[0] is not conn:
                try:
                    self._sftp = (conn, await conn.start_sftp_client())
                except asyncssh.ChannelOpenError as exc:
                    if exc.code != OPEN_REQUEST_SESSION_FAILED:
                        raise SyncError(f"the sshd of {self.where} refused a session for sftp: {exc.reason}") from exc
                    self._sftp = (conn, None)
                except (OSError, asyncssh.Error) as exc:
                    raise SyncError(f"SFTP failed to start on {self.where}: {exc}") from exc
            return self._sftp[1]

    async def _drop(self) -> None:
        async with self._lock:
            conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.abort()

    async def _retrying(self, what: str, operation: Callable[[], Awaitable[T]]) -> T:
        """Run ``operation``; when the kept-alive connection turns out dead, reconnect and run it once more."""
        for attempt in (1, 2):
            try:
                return await operation()
            except _CONNECTION_LOST as exc:
                await self._drop()
                if attempt == 2:
                    raise SyncError(f"connection to {self.where} lost while {what}: {exc}") from exc
        raise AssertionError("unreachable")

    async def run(self, argv: list[str]) -> asyncssh.SSHCompletedProcess:
        """Run ``argv`` (every word quoted) on the remote."""
        return await self._run_line(shlex.join(argv))

    async def _run_line(
        self, line: str, *, stdin: bytes | None = None, binary: bool = False
    ) -> asyncssh.SSHCompletedProcess:
        """Run a command line; with ``binary`` its stdin and output are bytes."""

        async def operation() -> asyncssh.SSHCompletedProcess:
            conn = await self._connection()
            try:
                return await conn.run(
                    line, input=stdin, check=False, timeout=COMMAND_TIMEOUT, **({"encoding": None} if binary else {})
                )
            except asyncssh.TimeoutError as exc:
                raise SyncError(f"{line!r} timed out on {self.where}") from exc

        return await self._retrying(f"running {line!r}", operation)

    async def uid(self) -> int:
        """The remote account's numeric uid (asked once)."""
        if self._uid is None:
            result = await self.run(["id", "-u"])
            out = str(result.stdout or "").strip()
            if result.exit_status != 0 or not out.isdigit():
                raise SyncError(f"cannot tell the remote account's uid on {self.where}: {result.stderr!s}")
            self._uid = int(out)
        return self._uid

    async def check_rsync(self, remote_rsync: str) -> None:
        """Refuse with a fix when rsync cannot run on the remote.

        ``remote_rsync`` is a command line for the remote shell, exactly as rsync's ``--rsync-path`` uses it.
        """
        result = await self._run_line(f"{remote_rsync} --version")
        if result.exit_status != 0:
            raise SyncError(
                f"rsync is not available on the cluster side ({self.where}): `{remote_rsync} --version` failed; "
                "install rsync there or ask the cluster admins for it",
                exit_code=result.exit_status,
                stderr=str(result.stderr or ""),
            )

    async def makedirs(self, path: str) -> None:
        """``mkdir -p path``."""

        async def operation() -> None:
            sftp = await self._sftp_client()
            if sftp is None:
                await self._command(["mkdir", "-p", "--", path], f"cannot create remote directory {path!r}")
                return
            try:
                await sftp.makedirs(path, exist_ok=True)
            except _CONNECTION_LOST:
                raise
            except (OSError, asyncssh.SFTPError) as exc:
                raise SyncError(f"cannot create remote directory {path!r} on {self.where}: {exc}") from exc

        await self._retrying(f"creating {path!r}", operation)

    async def entries(self, path: str, *, limit: int) -> list[str] | None:
        """Up to ``limit`` names in directory ``path`` (``.``/``..`` left out), None when it does not exist."""

        async def operation() -> list[str] | None:
            sftp = await self._sftp_client()
            if sftp is None:
                found = await self._command(
                    ssh_exec_files.list_names_argv(path, limit), f"cannot list remote directory {path!r}"
                )
                return None if found is None else ssh_exec_files.parse_names(found)
            names: list[str] = []
            try:
                async for entry in sftp.scandir(path):
                    name = _text(entry.filename)
                    if name not in (".", ".."):
                        names.append(name)
                        if len(names) >= limit:
                            break
            except _CONNECTION_LOST:
                raise
            except asyncssh.SFTPNoSuchFile:
                return None
            except asyncssh.SFTPError as exc:
                raise SyncError(f"cannot list remote directory {path!r} on {self.where}: {exc}") from exc
            return names

        return await self._retrying(f"listing {path!r}", operation)

    async def realpath(self, path: str) -> str | None:
        """``path`` with every symlink resolved on the remote (``.`` is the login directory), None if missing."""

        async def operation() -> str | None:
            sftp = await self._sftp_client()
            if sftp is None:
                found = await self._command(ssh_exec_files.real_path_argv(path), f"cannot resolve remote path {path!r}")
                return None if found is None else found.decode(errors="replace").rstrip("\n")
            try:
                await sftp.stat(path)
                real = await sftp.realpath(path)
            except _CONNECTION_LOST:
                raise
            except asyncssh.SFTPNoSuchFile:
                return None
            except asyncssh.SFTPError as exc:
                raise SyncError(f"cannot resolve remote path {path!r} on {self.where}: {exc}") from exc
            return _text(real)

        return await self._retrying(f"resolving {path!r}", operation)

    async def read(self, path: str, *, limit: int) -> FoundFile:
        """``path`` if it is a regular file owned by this account, at most ``limit`` bytes."""
        mine = await self.uid()
        return await self._retrying(f"reading {path!r}", lambda: self._read(path, uid=mine, limit=limit))

    async def _read(self, path: str, *, uid: int, limit: int) -> FoundFile:
        sftp = await self._sftp_client()
        if sftp is None:
            return await self._read_by_command(path, uid=uid, limit=limit)
        try:
            before = await sftp.lstat(path)
            refused = classify(before, uid=uid, limit=limit)
            if refused is not None:
                return refused
            async with sftp.open(path, "rb", encoding=None) as handle:
                # Opening follows symlinks: make sure the file opened is the one just checked.
                if _identity(await handle.stat()) != _identity(before):
                    return FoundFile(FileState.UNREADABLE, detail="it changed while being read")
                data = await handle.read(limit + 1)
        except _CONNECTION_LOST:
            raise
        except asyncssh.SFTPNoSuchFile:
            return FoundFile(FileState.MISSING)
        except asyncssh.SFTPError as exc:
            return FoundFile(FileState.UNREADABLE, detail=str(exc))
        return FoundFile(FileState.OK, data=data.encode() if isinstance(data, str) else bytes(data))

    async def write_atomic(self, path: str, data: bytes) -> None:
        """Replace ``path`` with ``data``: temp file in the same directory (mode 0600), then rename."""
        await self._retrying(f"writing {path!r}", lambda: self._write_atomic(path, data))

    async def _write_atomic(self, path: str, data: bytes) -> None:
        sftp = await self._sftp_client()
        tmp = temporary_name(path)
        if sftp is None:
            await self._command(ssh_exec_files.write_replacing_argv(tmp, path), f"cannot write {path!r}", stdin=data)
            return
        try:
            async with sftp.open(tmp, "xb", attrs=asyncssh.SFTPAttrs(permissions=0o600)) as handle:
                await handle.write(data)
            try:
                await sftp.posix_rename(tmp, path)
            except asyncssh.SFTPOpUnsupported:
                # Plain SFTP rename refuses to replace; mv renames over the target atomically.
                moved = await self.run(["mv", "-f", "--", tmp, path])
                if moved.exit_status != 0:
                    raise asyncssh.SFTPFailure(f"mv failed: {moved.stderr!s}") from None
        except _CONNECTION_LOST:
            raise
        except BaseException as exc:
            with contextlib.suppress(OSError, asyncssh.Error):
                await sftp.remove(tmp)
            if isinstance(exc, OSError | asyncssh.Error):
                raise SyncError(f"cannot write {path!r} on {self.where}: {exc}") from exc
            raise

    async def _read_by_command(self, path: str, *, uid: int, limit: int) -> FoundFile:
        found = await self._command(ssh_exec_files.own_file_argv(path, limit), f"cannot read {path!r}")
        if found is None:
            return FoundFile(FileState.MISSING)
        try:
            facts, data = ssh_exec_files.parse_own_file(found)
        except ValueError as exc:
            return FoundFile(FileState.UNREADABLE, detail=str(exc))
        return FoundFile.checked(mode=facts.mode, uid=facts.uid, size=facts.size, my_uid=uid, limit=limit, data=data)

    async def _command(self, argv: list[str], failure: str, *, stdin: bytes | None = None) -> bytes | None:
        """Run one of the file commands (sftp is refused); its stdout, ``None`` when the path does not exist,
        ``SyncError`` starting with ``failure`` when it failed otherwise."""
        result = await self._run_line(shlex.join(argv), stdin=stdin, binary=True)
        if result.exit_status == ssh_exec_files.MISSING:
            return None
        if result.exit_status != 0:
            stderr = result.stderr.decode(errors="replace") if isinstance(result.stderr, bytes) else result.stderr or ""
            raise SyncError(f"{failure} on {self.where} (sftp is refused there, the command said: {stderr.strip()})")
        out = result.stdout
        return out if isinstance(out, bytes) else (out or "").encode()

    async def close(self) -> None:
        async with self._lock:
            conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()


def classify(attrs: asyncssh.SFTPAttrs, *, uid: int, limit: int) -> FoundFile | None:
    """Why a file with ``attrs`` (from ``lstat``) must not be read, or None when it may be."""
    checked = FoundFile.checked(
        mode=attrs.permissions or 0, uid=attrs.uid, size=attrs.size or 0, my_uid=uid, limit=limit, data=b""
    )
    return None if checked.state is FileState.OK else checked


def _text(name: str | bytes) -> str:
    return name if isinstance(name, str) else name.decode(errors="replace")


def _identity(attrs: asyncssh.SFTPAttrs) -> tuple[object, ...]:
    return (attrs.permissions, attrs.uid, attrs.size, attrs.mtime)
