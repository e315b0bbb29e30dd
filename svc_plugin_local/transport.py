"""Slurm commands as local asyncio subprocesses: argv lists, timeouts, nothing through a shell."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from svc_host.plugin import (
    BytesResult,
    CommandResult,
    OutcomeUnknownError,
    ProcessStarts,
    SlurmTransport,
    TransportError,
    kill_process,
    slurm_program,
)

DEFAULT_TIMEOUT = 60.0
CONNECT_TIMEOUT = 20.0
"""Seconds ``open_tcp`` waits for a TCP handshake (a node that drops packets would otherwise take minutes)."""
HIDDEN_NAMES_VARIABLE = "SVC_SECRET_ENV"
"""Names (``NAME``) or prefixes (``PREFIX_*``), comma-separated, that jobs must not inherit beside svc's own."""


def job_environment(base: dict[str, str], extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the Slurm commands svc runs, which ``sbatch --export=ALL`` hands to every job.

    svc's own variables (``SVC_*``: the API token, the database URL...), ``CHAT_WEBHOOK_URL`` and whatever
    ``SVC_SECRET_ENV`` marks are left out; ``extra`` (the transport's own variables) is added.
    """
    marked = [word.strip() for word in base.get(HIDDEN_NAMES_VARIABLE, "").split(",") if word.strip()]

    def secret(name: str) -> bool:
        if name.startswith("SVC_") or name == "CHAT_WEBHOOK_URL":
            return True
        return any(name == word or (word.endswith("*") and name.startswith(word[:-1])) for word in marked)

    return {name: value for name, value in base.items() if not secret(name)} | (extra or {})


class LocalTransport(SlurmTransport):
    """The ``local`` transport: the cluster is the machine svc runs on."""

    name = "local"

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT, env: dict[str, str] | None = None) -> None:
        self.timeout = timeout
        self.env = env
        self._processes = ProcessStarts()

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        idempotent: bool = True,  # a local command is never run twice, whatever it is
    ) -> CommandResult:
        argv = list(argv)
        code, out, err = await self._communicate(argv, None if stdin is None else stdin.encode(), timeout)
        return CommandResult(argv, code, out.decode(errors="replace"), err.decode(errors="replace"))

    async def run_bytes(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> BytesResult:
        argv = list(argv)
        code, out, err = await self._communicate(argv, stdin, timeout)
        return BytesResult(argv, code, out, err.decode(errors="replace"))

    async def _communicate(
        self, argv: list[str], stdin: bytes | None, timeout: float | None
    ) -> tuple[int, bytes, bytes]:
        try:
            proc = await self._processes.start(
                argv,
                own_group=True,  # a timeout kills what it started too
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=job_environment(dict(os.environ), self.env),
            )
        except FileNotFoundError as exc:
            raise TransportError(
                f"{slurm_program(argv)} not found on this machine; is Slurm installed and on PATH?", argv=argv
            ) from exc
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), timeout or self.timeout)
        except asyncio.CancelledError:
            kill_process(proc, group=True)  # nobody will read its answer: do not leave the process behind
            await asyncio.shield(proc.wait())
            raise
        except TimeoutError as exc:
            kill_process(proc, group=True)
            await proc.wait()
            raise OutcomeUnknownError(
                f"{slurm_program(argv)} timed out after {timeout or self.timeout:.0f} s", argv=argv, timed_out=True
            ) from exc
        return (proc.returncode if proc.returncode is not None else -1), out, err

    async def close(self) -> None:
        await super().close()
        await self._processes.close()

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return await asyncio.to_thread(_read_slice, path, offset, limit)

    async def open_tcp(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A plain TCP connection from this machine: the cluster's nodes are reachable from here."""
        try:
            return await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT)
        except TimeoutError as exc:
            raise TransportError(f"{host}:{port} did not answer within {CONNECT_TIMEOUT:.0f} s") from exc
        except OSError as exc:
            raise TransportError(f"cannot connect to {host}:{port} on transport {self.name!r}: {exc}") from exc

    async def make_dir(self, path: str) -> None:
        """``mkdir -p`` in this process (the cluster is this machine): no process started for each submission."""
        try:
            await asyncio.to_thread(os.makedirs, path, exist_ok=True)
        except OSError as exc:
            argv = ["mkdir", "-p", "--", path]
            raise TransportError(f"mkdir failed on transport {self.name!r}", argv=argv, stderr=str(exc)) from exc


def _read_slice(path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
    """Opened without blocking and checked on the descriptor: a FIFO or device under a log's name is an error,
    never a thread stuck in ``open`` or a read without end."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TransportError(f"log {path!r} is not a regular file; svc reads only regular log files")
        handle.seek(offset)
        return handle.read(limit), info.st_size
