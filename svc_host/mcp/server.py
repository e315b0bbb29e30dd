"""MCP server factory: every ``ToolSpec`` becomes a tool with read-only / destructive hints.

The server's lifespan owns a ``Host`` built with ``read_env=False``: the tool server reads neither the current
profile nor the SVC_* variables that choose a cluster or override configuration (only an explicit ``transport``
selects a cluster); those saying where svc keeps its files and which plugins load still apply.

Agents spawn ``svc mcp`` on every launch, so the opening request is answered before the store is opened (and a
``server/discover`` before the SDK is imported, see ``svc_host.mcp.opening``): the
Host starts (store, monitor, run services, plugin tasks) on the first tool call, or ``START_AFTER`` seconds
after the server came up when no call came, so runs and sweeps nobody drives are still taken over. The
store is opened in a worker thread: its import and migrations never hold up the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from svc_host import __version__
from svc_host.errors import SvcError
from svc_host.host import Host
from svc_host.mcp.opening import INSTRUCTIONS, NAME
from svc_host.mcp.results import SpecShapedServer, failure
from svc_host.settings.paths import SvcPaths

log = logging.getLogger(__name__)

START_AFTER = 2.0
"""Seconds after start-up at which the Host starts by itself when no tool call started it."""


def create_server(host: Host | None = None, *, roots: Sequence[Path] = ()) -> MCPServer[Host]:
    """Build the stdio MCP server from the tools the plugins offer; ``roots`` are more directories its tools
    may read and write workflow files in (see ``svc_host.workflows.files``)."""
    if host is None:
        paths = replace(SvcPaths.from_env(), extra_roots=tuple(root.resolve() for root in roots))
        host = Host.create("mcp", paths=paths, read_env=False)
    starting: asyncio.Future[None] | None = None

    def start() -> asyncio.Future[None]:
        nonlocal starting
        if starting is None:
            starting = asyncio.ensure_future(_start(host))
        return starting

    @asynccontextmanager
    async def lifespan(_: MCPServer[Host]) -> AsyncIterator[Host]:
        timer = asyncio.get_running_loop().call_later(START_AFTER, start)
        try:
            yield host
        finally:
            timer.cancel()
            if starting is not None:
                with contextlib.suppress(Exception):  # a failed start was reported to the calls that waited
                    await starting
            await host.close()

    server: MCPServer[Host] = SpecShapedServer(NAME, version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan)
    for spec in host.plugins.mcp_tools().values():
        try:
            server.add_tool(
                _after_start(spec.function, start),
                name=spec.name,
                description=spec.description,
                annotations=ToolAnnotations(
                    read_only_hint=spec.read_only,
                    destructive_hint=spec.destructive,
                    open_world_hint=True,
                ),
            )
        except Exception:  # a plugin's tool whose signature the SDK cannot read must not take the others down
            log.exception("MCP tool %s left out: its parameters cannot be turned into a schema", spec.name)
    return server


async def _start(host: Host) -> None:
    await asyncio.to_thread(lambda: host.store)
    await host.start()


def _after_start(
    function: Callable[..., Awaitable[dict[str, Any]]], start: Callable[[], asyncio.Future[None]]
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """The tool, run once the Host has started; a start that failed (an unusable database) is the tool's error."""

    @functools.wraps(function)
    async def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            await asyncio.shield(start())
        except SvcError as exc:
            return failure(str(exc))
        return await function(*args, **kwargs)

    return call
