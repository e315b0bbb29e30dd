"""Slurm over SSH: one kept-alive asyncssh connection per profile; every command is a channel on it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import asyncssh
from asyncssh.constants import OPEN_ADMINISTRATIVELY_PROHIBITED, OPEN_REQUEST_SESSION_FAILED

from svc_host.plugin import (
    BytesResult,
    CommandResult,
    OutcomeUnknownError,
    SlurmTransport,
    SSHProfile,
    TransportError,
    ssh_exec_files,
)
from svc_host.plugin import slurm_program as program
from svc_plugin_ssh import logfilter
from svc_plugin_ssh.connect import open_connection

if TYPE_CHECKING:
    from svc_plugin_ssh.pool import SessionPool

DEFAULT_TIMEOUT = 60.0
CHANNEL_RETRY_DELAY = 1.0
"""Pause before a command whose channel the sshd refused is tried once more."""
CONNECTION_CLOSED = "SSH connection closed"
"""asyncssh's reason for a channel refused because the connection is already closed (not by the login node)."""
QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)
"""Linux's option to acknowledge received data at once (``QuickAckReader``); absent elsewhere."""
TCP_OPEN_TIMEOUT = 20.0
"""Seconds ``open_tcp`` waits for the login node to reach the target (a node that drops packets takes minutes)."""

log = logging.getLogger(__name__)

logfilter.install()  # before any connection: asyncssh logs command lines, which carry the profile's env values


class SSHTransport(SlurmTransport):
    """A transport named after its SSH profile. Reconnects once when the connection dropped; runs a command
    again after a drop only when it is idempotent (sbatch never is: see ``SlurmTransport.submit``).

    At most ``profile.max_channels`` channels are open on the connection at once (a stock sshd allows 10
    sessions per connection): a command or read beyond that waits for a channel to close. The SFTP session
    holds one channel while it is open. When the login node refuses the ``sftp`` subsystem, reads fall back to
    commands (:mod:`svc_host.transports.ssh_exec_files`) for the rest of that connection.
    """

    def __init__(self, name: str, profile: SSHProfile, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.name = name
        self.profile = profile
        self.timeout = timeout
        self._conn: asyncssh.SSHClientConnection | None = None
        self._sftp: tuple[asyncssh.SSHClientConnection, asyncssh.SFTPClient | None] | None = None
        """The connection's SFTP client, or ``None`` for a connection whose sshd refused the subsystem."""
        self._login_dir: tuple[asyncssh.SSHClientConnection, str] | None = None
        self._lock = asyncio.Lock()
        self._sftp_lock = asyncio.Lock()
        self._channels = asyncio.Semaphore(profile.max_channels)

    @property
    def is_connected(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    @property
    def sftp_refused(self) -> bool:
        """Whether the current connection's sshd refused the ``sftp`` subsystem (reads run as commands)."""
        return self._sftp is not None and self._sftp[0] is self._conn and self._sftp[1] is None

    def pooled(self, size: int) -> SessionPool:
        """A pool of min(size, 8) sessions of this profile for a sweep; closed when the context exits."""
        from svc_plugin_ssh.pool import SessionPool

        return SessionPool(self.name, size, lambda: SSHTransport(self.name, self.profile, timeout=self.timeout))

    async def connect(self) -> None:
        with contextlib.suppress(TransportError):  # the first command connects again and says what is wrong
            await self.connection()

    async def connection(self) -> asyncssh.SSHClientConnection:
        """The profile's connection, opened on first use and after a drop."""
        async with self._lock:
            if self._conn is None or self._conn.is_closed():
                self._conn = await open_connection(self.name, self.profile)
            return self._conn

    async def login_dir(self) -> str:
        """The login (home) directory, asked once per connection."""
        conn = await self.connection()
        if self._login_dir is None or self._login_dir[0] is not conn:
            self._login_dir = (conn, await super().login_dir())
        return self._login_dir[1]

    async def user(self) -> str | None:
        """The login the connection authenticated as: the profile's username, else the ``User`` of the
        ssh_config entry for ``ssh_host``, else the local login (no command needed)."""
        username = (await self.connection()).get_extra_info("username")
        return str(username) if username else None

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
        result = await self._exec(argv, stdin=stdin, timeout=timeout, idempotent=idempotent, binary=False)
        return CommandResult(argv, self._exit_code(argv, result), _text(result.stdout), _text(result.stderr))

    async def run_bytes(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> BytesResult:
        argv = list(argv)
        result = await self._exec(argv, stdin=stdin, timeout=timeout, idempotent=idempotent, binary=True)
        return BytesResult(argv, self._exit_code(argv, result), _bytes(result.stdout), _text(result.stderr))

    def _exit_code(self, argv: list[str], result: asyncssh.SSHCompletedProcess) -> int:
        """The command's exit status (255 when a signal killed it); a program the login node lacks is an error."""
        exit_code = result.exit_status if result.exit_status is not None else 255
        if exit_code == 127 and "not found" in _text(result.stderr):
            raise TransportError(
                f"{program(argv)} not found on {self.name!r}", argv=argv, exit_code=127, stderr=_text(result.stderr)
            )
        return exit_code

    async def _exec(
        self, argv: list[str], *, stdin: str | bytes | None, timeout: float | None, idempotent: bool, binary: bool
    ) -> asyncssh.SSHCompletedProcess:
        """Run ``argv`` on a channel of the connection (waiting for one when ``max_channels`` are open)."""
        line = self.command_line(argv)
        limit = timeout or self.timeout
        for attempt in (1, 2):
            conn = await self.connection()
            try:
                async with self._channels:
                    result = await conn.run(
                        line, input=stdin, check=False, timeout=limit, **({"encoding": None} if binary else {})
                    )
                if result.exit_status is None and result.exit_signal is None:
                    # The channel closed without an exit status: the connection died under the command.
                    raise asyncssh.ConnectionLost("the session ended without an exit status")
                return result
            except asyncssh.TimeoutError as exc:
                raise OutcomeUnknownError(
                    f"{program(argv)} timed out after {limit:.0f} s on {self.name!r}", argv=argv, timed_out=True
                ) from exc
            except asyncssh.ChannelOpenError as exc:
                # Refused before it started, so any command may go again; the connection itself is fine (the
                # other commands on it keep running): wait a moment for one of them to end and try once more.
                if attempt == 2:
                    raise TransportError(
                        channel_refused(self.name, self.profile, program(argv), exc), argv=argv
                    ) from exc
                await asyncio.sleep(CHANNEL_RETRY_DELAY)
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, OSError) as exc:  # a reset, a broken pipe
                await self._drop(conn)
                if not idempotent:
                    raise OutcomeUnknownError(
                        f"connection to {self.name!r} lost while {program(argv)} ran (not run again): {exc}", argv=argv
                    ) from exc
                if attempt == 2:
                    raise TransportError(
                        f"connection to {self.name!r} lost running {program(argv)}: {exc}", argv=argv
                    ) from exc
        raise AssertionError("unreachable")

    async def open_tcp(self, host: str, port: int) -> tuple[QuickAckReader, asyncssh.SSHWriter[bytes]]:
        """A direct-tcpip channel on the held connection: the login node connects to ``host:port`` (a compute
        node's port, reachable from there when it is not from here) and the channel carries the bytes.

        Such a channel takes none of the ``max_channels`` slots: OpenSSH's MaxSessions counts shells, commands and
        subsystems only, so proxied connections (a notebook holds several WebSockets) never make commands wait.
        A dropped connection is opened again once; a target the login node cannot reach is a ``TransportError``
        naming the login node and the target."""
        for attempt in (1, 2):
            conn = await self.connection()
            try:
                reader, writer = await asyncio.wait_for(conn.open_connection(host, port), TCP_OPEN_TIMEOUT)
                return QuickAckReader(reader, conn.get_extra_info("socket")), writer
            except asyncssh.ChannelOpenError as exc:
                if exc.reason == CONNECTION_CLOSED and attempt == 1:  # closed under us, the channel never left
                    await self._drop(conn)
                    continue
                raise TransportError(tcp_refused(self.name, self.profile, host, port, exc)) from exc
            except TimeoutError as exc:
                raise TransportError(
                    f"the login node of {self.name!r} ({_login_label(self.profile)}) could not reach {host}:{port} "
                    f"within {TCP_OPEN_TIMEOUT:.0f} s"
                ) from exc
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, OSError) as exc:
                await self._drop(conn)
                if attempt == 2:
                    raise TransportError(
                        f"connection to {self.name!r} lost opening a channel to {host}:{port}: {exc}"
                    ) from exc
        raise AssertionError("unreachable")

    async def _sftp_client(self, conn: asyncssh.SSHClientConnection) -> asyncssh.SFTPClient | None:
        """The SFTP client of ``conn``, started once (concurrent readers wait for it), holding one of the
        connection's channels; ``None`` when the sshd refused the subsystem, remembered for this connection."""
        async with self._sftp_lock:
            if self._sftp is None or self._sftp[0] is not conn:
                await self._channels.acquire()
                try:
                    client: asyncssh.SFTPClient | None = await conn.start_sftp_client()
                except asyncssh.ChannelOpenError as exc:
                    self._channels.release()
                    if exc.code != OPEN_REQUEST_SESSION_FAILED:
                        raise TransportError(channel_refused(self.name, self.profile, "sftp", exc)) from exc
                    log.info("sshd of %r refused the sftp subsystem: reading files with commands", self.name)
                    client = None
                except BaseException:
                    self._channels.release()
                    raise
                self._forget_sftp()
                self._sftp = (conn, client)
            return self._sftp[1]

    def _forget_sftp(self) -> None:
        """Give back the channel the SFTP session held (its connection is gone or being replaced)."""
        if self._sftp is not None and self._sftp[1] is not None:
            self._sftp[1].exit()
            self._channels.release()
        self._sftp = None

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        for attempt in (1, 2):
            conn = await self.connection()
            try:
                sftp = await self._sftp_client(conn)
                if sftp is None:
                    return await self._read_by_command(path, offset, limit)
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
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, asyncssh.SFTPConnectionLost, OSError) as exc:
                await self._drop(conn)
                if attempt == 2:
                    raise TransportError(f"connection to {self.name!r} lost reading {path}: {exc}") from exc
        raise AssertionError("unreachable")

    async def _read_by_command(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        argv = ssh_exec_files.read_range_argv(path, offset, limit)
        result = await self._exec(argv, stdin=None, timeout=None, idempotent=True, binary=True)
        if result.exit_status == ssh_exec_files.MISSING:
            return None
        if result.exit_status == ssh_exec_files.UNREADABLE:
            raise TransportError(f"permission denied reading {path} on {self.name!r}")
        try:
            if result.exit_status != 0:
                raise ValueError(_text(result.stderr).strip()[-300:])
            return ssh_exec_files.parse_read_range(_bytes(result.stdout))
        except ValueError as exc:
            raise TransportError(
                f"cannot read {path} on {self.name!r} with stat/tail/head (sftp is refused there): {exc}", argv=argv
            ) from exc

    async def _drop(self, conn: asyncssh.SSHClientConnection) -> None:
        """Abort ``conn`` if it is still the current connection (a concurrent caller may have replaced it)."""
        async with self._lock:
            if self._conn is not conn:
                return
            self._conn = None
        async with self._sftp_lock:
            if self._sftp is not None and self._sftp[0] is conn:
                self._forget_sftp()
        conn.abort()

    async def close(self) -> None:
        await super().close()
        async with self._lock:
            conn, self._conn = self._conn, None
        async with self._sftp_lock:
            self._forget_sftp()
        if conn is not None:
            conn.close()
            await conn.wait_closed()


def channel_refused(name: str, profile: SSHProfile, what: str, exc: asyncssh.ChannelOpenError) -> str:
    """Why the sshd refused a session: its per-connection limit (MaxSessions) is below ours, or it forbids it."""
    return (
        f"the sshd of {name!r} refused a new session for {what} ({exc.reason}): its MaxSessions is probably below "
        f"the profile's max_channels ({profile.max_channels}); lower max_channels"
    )


class QuickAckReader:
    """A channel's reader that asks the kernel to acknowledge at once what arrives next on the connection.

    A login node's sshd does not set TCP_NODELAY on a connection without a terminal, so when an app answers in two
    writes (a head, then a small body) the sshd holds the second until the first is acknowledged, and Linux delays
    that acknowledgement up to 40 ms while svc has nothing to send back: a third of proxied requests took 40 ms
    (bench/session_proxy.py). TCP_QUICKACK before each read removes the wait; it is not permanent, hence each time.
    Where the option does not exist, or the connection runs through a jump host (no socket of its own), it reads
    as asyncssh does."""

    def __init__(self, reader: asyncssh.SSHReader[bytes], sock: Any) -> None:
        self._reader = reader
        self._sock = sock if QUICKACK is not None and hasattr(sock, "setsockopt") else None

    def _ack_next(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.setsockopt(socket.IPPROTO_TCP, QUICKACK, 1)

    async def read(self, n: int = -1) -> bytes:
        self._ack_next()
        return await self._reader.read(n)

    async def readexactly(self, n: int) -> bytes:
        self._ack_next()
        return await self._reader.readexactly(n)


def tcp_refused(name: str, profile: SSHProfile, host: str, port: int, exc: asyncssh.ChannelOpenError) -> str:
    """Why the login node did not open a connection to ``host:port``: nothing listens there, the node is down, or
    its sshd forbids forwarding."""
    hint = (
        ": its sshd forbids TCP forwarding (AllowTcpForwarding no); ask the cluster's admins"
        if exc.code == OPEN_ADMINISTRATIVELY_PROHIBITED
        else ""
    )
    return (
        f"the login node of {name!r} ({_login_label(profile)}) could not open a connection to {host}:{port} "
        f"({exc.reason}){hint}"
    )


def _login_label(profile: SSHProfile) -> str:
    return profile.ssh_host or f"{profile.hostname}:{profile.port}"


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode()


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
