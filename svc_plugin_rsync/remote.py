"""svc's own files on the remote (manifest, owner marker), read and written by commands the profile's transport
runs on its one SSH connection (``ssh_exec_files``: constant scripts, paths as arguments).

Reads never follow a symlink and never read a file another account owns; writes go to a temp file in the same
directory (mode 0600, never over an existing one) and are renamed into place (rename replaces a symlink itself,
never its target).
"""

from __future__ import annotations

from svc_host.plugin import (
    FileState,
    FoundFile,
    SlurmTransport,
    SSHProfile,
    SyncError,
    TransportError,
    ssh_exec_files,
    temporary_name,
)

COMMAND_TIMEOUT = 60.0


class RemoteFiles:
    """File operations in one profile's remote home, through the profile's transport (``run_bytes``): the transport
    reconnects after a drop and runs an idempotent command once more; a write is never run twice."""

    def __init__(self, profile_name: str, profile: SSHProfile, transport: SlurmTransport) -> None:
        self.profile_name = profile_name
        self.profile = profile
        self.transport = transport
        self._uid: int | None = None

    @property
    def where(self) -> str:
        host = self.profile.ssh_host or self.profile.hostname
        return f"{self.profile.username}@{host}".lstrip("@") + f" (profile {self.profile_name!r})"

    async def _run(
        self, argv: list[str], what: str, *, stdin: bytes | None = None, idempotent: bool = True
    ) -> tuple[int, bytes, str]:
        """Exit status, stdout and stderr of ``argv``; ``SyncError`` when it could not be run at all."""
        try:
            result = await self.transport.run_bytes(argv, stdin=stdin, timeout=COMMAND_TIMEOUT, idempotent=idempotent)
        except TransportError as exc:
            raise SyncError(f"{what} on {self.where}: {exc}") from exc
        return result.exit_code, result.stdout, result.stderr

    async def uid(self) -> int:
        """The remote account's numeric uid (asked once)."""
        if self._uid is None:
            code, out, err = await self._run(["id", "-u"], "cannot tell the remote account's uid")
            text = out.decode(errors="replace").strip()
            if code != 0 or not text.isdigit():
                raise SyncError(f"cannot tell the remote account's uid on {self.where}: {err.strip()}")
            self._uid = int(text)
        return self._uid

    async def check_rsync(self, remote_rsync: str) -> None:
        """Refuse with a fix when rsync cannot run on the remote.

        ``remote_rsync`` is a command line for the remote shell, exactly as rsync's ``--rsync-path`` uses it (operator
        configuration, never user input), so it runs through ``sh -c`` as rsync would run it.
        """
        argv = ["sh", "-c", f"{remote_rsync} --version"]
        try:
            result = await self.transport.run_bytes(argv, timeout=COMMAND_TIMEOUT)
            code, err = result.exit_code, result.stderr
        except TransportError as exc:
            if exc.exit_code != 127:  # 127: the shell did not find it (the transport says "not found")
                raise SyncError(f"cannot run rsync on {self.where}: {exc}") from exc
            code, err = 127, exc.stderr_tail
        if code != 0:
            raise SyncError(
                f"rsync is not available on the cluster side ({self.where}): `{remote_rsync} --version` failed; "
                "install rsync there or ask the cluster admins for it",
                exit_code=code,
                stderr=err,
            )

    async def makedirs(self, path: str) -> None:
        """``mkdir -p path``."""
        await self._command(["mkdir", "-p", "--", path], f"cannot create remote directory {path!r}")

    async def entries(self, path: str, *, limit: int) -> list[str] | None:
        """Up to ``limit`` names in directory ``path`` (``.``/``..`` left out), None when it does not exist."""
        found = await self._command(
            ssh_exec_files.list_names_argv(path, limit), f"cannot list remote directory {path!r}"
        )
        return None if found is None else ssh_exec_files.parse_names(found)

    async def realpath(self, path: str) -> str | None:
        """``path`` with every symlink resolved on the remote (``.`` is the login directory), None if missing."""
        found = await self._command(ssh_exec_files.real_path_argv(path), f"cannot resolve remote path {path!r}")
        return None if found is None else found.decode(errors="replace").rstrip("\n")

    async def read(self, path: str, *, limit: int) -> FoundFile:
        """``path`` if it is a regular file owned by this account, at most ``limit`` bytes."""
        mine = await self.uid()
        found = await self._command(ssh_exec_files.own_file_argv(path, limit), f"cannot read {path!r}")
        if found is None:
            return FoundFile(FileState.MISSING)
        try:
            facts, data = ssh_exec_files.parse_own_file(found)
        except ValueError as exc:
            return FoundFile(FileState.UNREADABLE, detail=str(exc))
        return FoundFile.checked(mode=facts.mode, uid=facts.uid, size=facts.size, my_uid=mine, limit=limit, data=data)

    async def write_atomic(self, path: str, data: bytes) -> None:
        """Replace ``path`` with ``data``: temp file in the same directory (mode 0600), then rename."""
        argv = ssh_exec_files.write_replacing_argv(temporary_name(path), path)
        await self._command(argv, f"cannot write {path!r}", stdin=data, idempotent=False)

    async def _command(
        self, argv: list[str], failure: str, *, stdin: bytes | None = None, idempotent: bool = True
    ) -> bytes | None:
        """Run one of the file commands; its stdout, ``None`` when the path does not exist, ``SyncError`` starting
        with ``failure`` when it failed otherwise."""
        code, out, err = await self._run(argv, failure, stdin=stdin, idempotent=idempotent)
        if code == ssh_exec_files.MISSING:
            return None
        if code != 0:
            raise SyncError(f"{failure} on {self.where}: {err.strip() or f'exit status {code}'}")
        return out
