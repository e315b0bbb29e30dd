"""MCP server factory: every ``ToolSpec`` becomes a tool with read-only / destructive hints.

The server's lifespan owns a ``Host`` built with ``read_env=False``: the tool server reads neither SVC_*
variables nor the current profile; only an explicit ``transport`` selects a cluster.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from svc_host import __version__
from svc_host.context import Host
from svc_host.mcp.results import SpecShapedServer

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "svc submits and watches batch jobs on Slurm GPU clusters. Every tool returns an object with "
    "'success'; on failure 'error' says what went wrong. Omit 'transport' (or pass 'local') for the "
    "scheduler on this machine, or pass an SSH profile name (see list_ssh_profiles)."
)


def create_server(host: Host | None = None) -> MCPServer[Host]:
    """Build the stdio MCP server from the tools the plugins offer."""
    host = host or Host.create("mcp", read_env=False)

    @asynccontextmanager
    async def lifespan(_: MCPServer[Host]) -> AsyncIterator[Host]:
        await host.start()
        try:
            yield host
        finally:
            await host.close()

    server: MCPServer[Host] = SpecShapedServer("svc", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan)
    for spec in host.plugins.mcp_tools().values():
        try:
            server.add_tool(
                spec.function,
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
