"""A site transport written exactly as docs/plugins/README.md showed it before plugin API 1.0: its imports and
its ``run`` signature are last month's, untouched. svc keeps running it until the deprecations end (svc 0.3)."""

from __future__ import annotations

import asyncio
import os

from svc_host.transport import CommandResult, SlurmTransport

from svc_host.errors import TransportError


class LastMonthTransport(SlurmTransport):
    name = "lastmonth"

    async def run(self, argv, *, stdin=None, timeout=None) -> CommandResult:  # type: ignore[no-untyped-def]
        pipe = asyncio.subprocess.PIPE
        try:
            proc = await asyncio.create_subprocess_exec(*argv, stdin=pipe, stdout=pipe, stderr=pipe)
        except FileNotFoundError as exc:
            raise TransportError(f"{argv[0]} not found", argv=list(argv)) from exc
        data = stdin.encode() if stdin is not None else None
        out, err = await asyncio.wait_for(proc.communicate(data), timeout or 60)
        return CommandResult(list(argv), proc.returncode or 0, out.decode(), err.decode())

    async def read_bytes(self, path, offset, limit):  # type: ignore[no-untyped-def]
        try:
            with open(path, "rb") as file:  # noqa: ASYNC230 - kept as its author wrote it
                size = os.fstat(file.fileno()).st_size
                file.seek(offset)
                return file.read(limit), size
        except FileNotFoundError:
            return None
