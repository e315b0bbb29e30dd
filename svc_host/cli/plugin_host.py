"""The host a plugin's CLI command works with (``svc_host.plugin.cli_host``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from svc_host.plugin_core.view import PluginHost


@contextlib.asynccontextmanager
async def cli_host() -> AsyncIterator[PluginHost]:
    """The host of a CLI command (``svc <your command>``), closed when the block ends."""
    from svc_host.host import Host

    host = Host.create("cli")
    try:
        yield host
    finally:
        await host.close()
