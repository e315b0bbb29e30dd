"""Slurm behind the site's wrapper: commands run on the login node through OpenSSH, every sbatch is charged to
the site's account and QOS, logs are read as raw bytes (READ: size, newline, bytes). SlurmTransport does the rest.

The settings are read at every command, so a ``svc config set plugins.site...`` reaches a running server's next
command (and the renderer, which reads them at every render, never disagrees with the transport)."""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Callable, Sequence

from svc_host.plugin import (
    CommandResult,
    OutcomeUnknownError,
    ProcessStarts,
    SlurmTransport,
    TransportError,
    slurm_program,
)

from svc_example_site.settings import SiteSettings

READ = 'test -f "$1" || exit 3; stat -c %s -- "$1"; tail -c +"$2" -- "$1" | head -c "$3"'


class SiteTransport(SlurmTransport):
    name = "site"

    def __init__(self, settings: Callable[[], SiteSettings], *, timeout: float = 60.0) -> None:
        """``settings`` gives the site's settings as they are now (``host.plugin_settings("site", SiteSettings)``)."""
        self.settings, self.timeout = settings, timeout
        self._processes = ProcessStarts()  # a start cancelled half-way can hang asyncio: never cancel one

    @staticmethod
    def ssh_argv(site: SiteSettings, argv: Sequence[str]) -> list[str]:
        key = ["-i", os.path.expanduser(site.key)] if site.key else []
        known = ["-o", f"UserKnownHostsFile={os.path.expanduser(site.known_hosts)}"] if site.known_hosts else []
        # BatchMode: a host key not in known_hosts is refused, never asked about
        return [
            "ssh",
            "-p",
            str(site.port),
            "-o",
            "BatchMode=yes",
            *key,
            *known,
            site.login_node,
            "--",
            shlex.join(argv),
        ]

    async def exec(
        self, site: SiteSettings, argv: Sequence[str], stdin: bytes | None, timeout: float | None
    ) -> tuple[int, bytes, bytes]:
        pipe = asyncio.subprocess.PIPE
        proc = await self._processes.start(self.ssh_argv(site, argv), stdin=pipe, stdout=pipe, stderr=pipe)
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), timeout or self.timeout)
        except (TimeoutError, asyncio.CancelledError):
            proc.kill()
            await asyncio.shield(proc.wait())
            raise
        return proc.returncode if proc.returncode is not None else -1, out, err

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        argv, site = list(argv), self.settings()
        if argv[:1] == ["sbatch"]:  # the wrapper's whole point: every job on the site's account and QOS
            argv[1:1] = [f"--account={site.charged_account}", f"--qos={site.qos}"]
        try:
            code, out, err = await self.exec(site, argv, stdin.encode() if stdin is not None else None, timeout)
        except TimeoutError:
            raise OutcomeUnknownError(f"{slurm_program(argv)} timed out", argv=argv, timed_out=True) from None
        if code == 255:  # ssh itself failed: the command may have started, so only an idempotent one is plain
            error = TransportError if idempotent else OutcomeUnknownError
            raise error(f"ssh to {site.login} failed: {err.decode(errors='replace').strip()}", argv=argv)
        return CommandResult(argv, code, out.decode(errors="replace"), err.decode(errors="replace"))

    async def close(self) -> None:
        await super().close()
        await self._processes.close()

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        argv = ["sh", "-c", READ, "sh", path, str(offset + 1), str(limit)]
        code, out, _ = await self.exec(self.settings(), argv, None, None)
        size, _, data = out.partition(b"\n")
        return (data, int(size)) if code == 0 else None
