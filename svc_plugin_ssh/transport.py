"""Slurm over SSH: one kept-alive asyncssh connection per profile; every command is a channel on it."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import asyncssh

from svc_host.plugin import (
    CommandResult,
    OutcomeUnknownError,
    SlurmTransport,
    SSHProfile,
    TransportError,
    ssh_connect_options,
)
from svc_host.plugin import (
    slurm_program as program,
)
from svc_plugin_ssh import logfilter

if TYPE_CHECKING:
    from svc_plugin_ssh.pool import SessionPool

DEFAULT_TIMEOUT = 60.0
RECONNECT_DELAYS = (0.5, 1.0, 2.0)
"""A restarting sshd refuses connections for a moment: a refused connect is tried again after these pauses."""

logfilter.install()  # before any connection: asyncssh logs command lines, which carry the profile's env values


class SSHTransport(SlurmTransport):
    """A transport named after its SSH profile. Reconnects once when the connection dropped; runs a command
    again after a drop only when it is idempotent (sbatch never is: see ``SlurmTransport.submit``)."""

    def __init__(self, name: str, profile: SSHProfile, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.name = name
        self.profile = profile
        self.timeout = timeout
        self._conn: asyncssh.SSHClientConnection | None = None
        self._sftp: asyncssh.SFTPClient | None = None
        self._login_dir: tuple[asyncssh.SSHClientConnection, str] | None = None
        self._lock = asyncio.Lock()

    @property
    def is_connected(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    def pooled(self, size: int) -> SessionPool:
        """A pool of min(size, 8) sessions of this profile for a sweep; closed when the context exits."""
        from svc_plugin_ssh.pool import SessionPool

        return SessionPool(self.name, self.profile, size, timeout=self.timeout)

    async def connect(self) -> None:
        with contextlib.suppress(TransportError):  # the first command connects again and says what is wrong
            await self.connection()

    async def connection(self) -> asyncssh.SSHClientConnection:
        """The profile's connection, opened on first use and after a drop."""
        async with self._lock:
            if self._conn is None or self._conn.is_closed():
                self._sftp = None
                self._conn = await self._connect()
            return self._conn

    async def login_dir(self) -> str:
        """The login (home) directory, asked once per connection."""
        conn = await self.connection()
        if self._login_dir is None or self._login_dir[0] is not conn:
            self._login_dir = (conn, await super().login_dir())
        return self._login_dir[1]

    async def _connect(self) -> asyncssh.SSHClientConnection:
        host, options = ssh_connect_options(self.profile)
        where = f"{options.get('username', '')}@{host}:{options.get('port', 22)}".lstrip("@")
        try:
            return await self._connect_retrying(host, options)
        except asyncssh.HostKeyNotVerifiable as exc:
            raise TransportError(
                f"host key of {where} is not known (profile {self.name!r}); add it to known_hosts, e.g. "
                f"`ssh-keyscan -p {options.get('port', 22)} {host} >> ~/.ssh/known_hosts`, or set the profile's "
                "known_hosts file"
            ) from exc
        except asyncssh.PermissionDenied as exc:
            raise TransportError(
                f"{where} refused the key of profile {self.name!r}; check username and key_filename"
            ) from exc
        except (OSError, asyncssh.Error) as exc:
            raise TransportError(f"cannot connect to {where} for profile {self.name!r}: {exc}") from exc

    async def user(self) -> str | None:
        """The login the connection authenticated as: the profile's username, else the ``User`` of the
        ssh_config entry for ``ssh_host``, else the local login (no command needed)."""
        username = (await self.connection()).get_extra_info("username")
        return str(username) if username else None

    @staticmethod
    async def _connect_retrying(host: str, options: dict[str, Any]) -> asyncssh.SSHClientConnection:
        for delay in (*RECONNECT_DELAYS, None):
            try:
                return await asyncssh.connect(host, **options)
            except (ConnectionRefusedError, ConnectionResetError, asyncssh.ConnectionLost):
                if delay is None:
                    raise
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    def command_line(self, argv: Sequence[str]) -> str:
        """The argv as one remote command line: every word quoted, profile env vars set with ``env``.

        The keys are POSIX names (the profile model refuses others) and ``--`` ends ``env``'s options, so no
        key or value can become an option or a command; ``shlex.join`` keeps every value one literal word.
        """
        words = list(argv)
        if self.profile.env_vars:
            words = ["env", "--", *(f"{k}={v}" for k, v in sorted(self.profile.env_vars.items())), *words]
        return shlex.join(words)

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> CommandResult:
        argv = list(argv)
        line = self.command_line(argv)
        limit = timeout or self.timeout
        for attempt in (1, 2):
            conn = await self.connection()
            try:
                result = await conn.run(line, input=stdin, check=False, timeout=limit)
                if result.exit_status is None and result.exit_signal is None:
                    # The channel closed without an exit status: the connection died under the command.
                    raise asyncssh.ConnectionLost("the session ended without an exit status")
            except asyncssh.TimeoutError as exc:
                raise OutcomeUnknownError(
                    f"{program(argv)} timed out after {limit:.0f} s on {self.name!r}", argv=argv, timed_out=True
                ) from exc
            except asyncssh.ChannelOpenError as exc:
                # The server refused the session: the command never started, so any command may go again.
                await self._drop()
                if attempt == 2:
                    raise TransportError(
                        f"connection to {self.name!r} refused {program(argv)}: {exc}", argv=argv
                    ) from exc
                continue
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, OSError) as exc:  # a reset, a broken pipe
                await self._drop()
                if not idempotent:
                    raise OutcomeUnknownError(
                        f"connection to {self.name!r} lost while {program(argv)} ran (not run again): {exc}", argv=argv
                    ) from exc
                if attempt == 2:
                    raise TransportError(
                        f"connection to {self.name!r} lost running {program(argv)}: {exc}", argv=argv
                    ) from exc
                continue
            exit_code = result.exit_status if result.exit_status is not None else 255  # killed by a signal
            if exit_code == 127 and "not found" in str(result.stderr):
                raise TransportError(
                    f"{program(argv)} not found on {self.name!r}", argv=argv, exit_code=127, stderr=str(result.stderr)
                )
            return CommandResult(argv, exit_code, _text(result.stdout), _text(result.stderr))
        raise AssertionError("unreachable")

    async def _sftp_client(self) -> asyncssh.SFTPClient:
        conn = await self.connection()
        if self._sftp is None:
            self._sftp = await conn.start_sftp_client()
        return self._sftp

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        for attempt in (1, 2):
            try:
                sftp = await self._sftp_client()
                try:
                    async with sftp.open(path, "rb") as handle:
                        size = (await handle.stat()).size or 0
                        await handle.seek(offset)
                        data = await handle.read(limit)
                        return (data if isinstance(data, bytes) else data.encode()), size
                except asyncssh.SFTPNoSuchFile:
                    return None
                except asyncssh.SFTPPermissionDenied as exc:
                    raise TransportError(f"permission denied reading {path} on {self.name!r}") from exc
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, asyncssh.ChannelOpenError, OSError) as exc:
                await self._drop()
                if attempt == 2:
                    raise TransportError(f"connection to {self.name!r} lost reading {path}: {exc}") from exc
        raise AssertionError("unreachable")

    async def _drop(self) -> None:
        async with self._lock:
            conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.abort()

    async def close(self) -> None:
        await super().close()
        async with self._lock:
            conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
