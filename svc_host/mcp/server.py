"""MCP server factory: every ``ToolSpec`` becomes a tool with read-only / destructive hints.

The server's lifespan owns a ``Host`` built with ``read_env=False``: the tool server reads neither the current
profile nor the SVC_* variables that choose a cluster or override configuration (only an explicit ``transport``
selects a cluster); those saying where svc keeps its files and which plugins load still apply.

Agents spawn ``svc mcp`` on every launch and call it later, so the opening request is answered before the SDK is
imported (``svc_host.mcp.opening``) and everything loads in the background from spawn on: ``load`` builds the
server and ``prepare`` opens the store and builds the plugin tables in ``svc mcp``'s loading thread
(``svc_host.mcp.handoff``), then the Host starts (monitor, run services, plugin tasks) as soon as the server
serves, and the local scheduler's login is asked meanwhile (what ``list_jobs`` needs, and the one answer a later
call finds kept). A tool call waits for that start, whose failure (an unusable database) is the call's error,
unless its ``ToolSpec`` says it asks only the scheduler (``waits_for_start=False``: ``list_jobs``,
``get_resources``): that one is answered as soon as the server serves, while the store still loads. ``prepare``
runs in a worker thread there too, so its imports and migrations never hold up the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from svc_host import __version__
from svc_host.errors import SvcError
from svc_host.host import Host
from svc_host.mcp.context import LOCAL
from svc_host.mcp.opening import INSTRUCTIONS, NAME
from svc_host.mcp.results import SpecShapedServer, failure
from svc_host.settings.paths import SvcPaths

log = logging.getLogger(__name__)
_preparing = threading.Lock()


@dataclass(frozen=True)
class Loaded:
    server: SpecShapedServer[Host]
    host: Host


def load(roots: Sequence[Path] = ()) -> Loaded:
    """The server of ``svc mcp`` and its Host (not started); ``roots`` as for ``create_server``."""
    host = _mcp_host(roots)
    return Loaded(create_server(host), host)


def prepare(host: Host) -> None:
    """What the Host's start does that needs no event loop, in any thread, once: the store opened and migrated,
    the plugin tables built (the renderers, backends and transports they import), the monitor made and the run
    services' modules imported. The start itself then holds up the event loop (and the answers it serves) for
    no import."""
    with _preparing:
        host.store  # noqa: B018 - opens it
        host.plugins.build_tables()
        host.transports.specs()
        host.monitor  # noqa: B018 - makes it
        importlib.import_module("svc_host.workflows.engine")
        importlib.import_module("svc_host.sweeps.orchestrator")


def create_server(host: Host | None = None, *, roots: Sequence[Path] = ()) -> SpecShapedServer[Host]:
    """Build the stdio MCP server from the tools the plugins offer; ``roots`` are more directories its tools
    may read and write workflow files in (see ``svc_host.workflows.files``)."""
    host = host or _mcp_host(roots)
    starting: asyncio.Future[None] | None = None

    def start() -> asyncio.Future[None]:
        nonlocal starting
        if starting is None:
            starting = asyncio.ensure_future(_start(host))
        return starting

    @asynccontextmanager
    async def lifespan(_: MCPServer[Host]) -> AsyncIterator[Host]:
        start()
        try:
            yield host
        finally:
            if starting is not None:
                with contextlib.suppress(Exception):  # a failed start was reported to the calls that waited
                    await starting
            await host.close()

    server: SpecShapedServer[Host] = SpecShapedServer(
        NAME, version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan
    )
    for spec in host.plugins.mcp_tools().values():
        try:
            server.add_tool(
                _after_start(spec.function, start) if spec.waits_for_start else spec.function,
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


def _mcp_host(roots: Sequence[Path]) -> Host:
    paths = replace(SvcPaths.from_env(), extra_roots=tuple(root.resolve() for root in roots))
    return Host.create("mcp", paths=paths, read_env=False)


async def _start(host: Host) -> None:
    async def prepared_start() -> None:
        await asyncio.to_thread(prepare, host)
        await host.start()

    await asyncio.gather(prepared_start(), _local_login(host))


async def _local_login(host: Host) -> None:
    """The local scheduler's login (``id -un``, kept by the transport), asked while the Host starts: without it the
    first ``list_jobs`` ran one more command than the calls after it. A failure is left to the call that needs it."""
    with contextlib.suppress(SvcError, OSError):
        await host.transport(LOCAL).user()


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
