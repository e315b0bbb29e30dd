"""``SlurmTransport.run_bytes`` is optional for transports of plugin API 1.0/1.1: without it, a backend that needs it
gets one ``TransportError`` naming the transport, never an ``AttributeError`` or a silent empty answer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from svc_host.plugin import CommandResult, SlurmTransport, TransportError


class OldTransport(SlurmTransport):
    name = "old-site"

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        return CommandResult(list(argv), 0, "", "")

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


async def test_a_transport_without_run_bytes_says_so_in_one_error() -> None:
    with pytest.raises(TransportError, match=r"transport 'old-site' cannot run commands on bytes"):
        await OldTransport().run_bytes(["id", "-u"], stdin=b"")


async def test_the_local_transport_passes_bytes_through_unchanged() -> None:
    from svc_plugin_local.transport import LocalTransport

    transport = LocalTransport()
    try:
        data = bytes(range(256)) * 4  # every byte value, NUL and invalid UTF-8 included
        done = await transport.run_bytes(["cat"], stdin=data)
        assert (done.exit_code, done.stdout) == (0, data)
    finally:
        await transport.close()
