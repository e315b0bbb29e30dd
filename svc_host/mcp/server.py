"""MCP server factory: every ``ToolSpec`` becomes a tool with read-only / destructive hints."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from svc_host import __version__
from svc_host.plugins import PluginManager, get_plugin_manager

INSTRUCTIONS = (
    "svc submits and watches batch jobs on Slurm GPU clusters. Every tool returns an object with "
    "'success'; on failure 'error' says what went wrong. Omit 'transport' (or pass 'local') for the "
    "scheduler on this machine, or pass an SSH profile name (see list_ssh_profiles)."
)


def create_server(plugins: PluginManager | None = None) -> MCPServer:
    """Build the stdio MCP server from the tools the plugins offer."""
    manager = plugins or get_plugin_manager()
    server: MCPServer = MCPServer("svc", version=__version__, instructions=INSTRUCTIONS)
    for spec in manager.mcp_tools().values():
        server.add_tool(
            spec.function,
            name=spec.name,
            description=spec.description,
            annotations=ToolAnnotations(
                readOnlyHint=spec.read_only,
                destructiveHint=spec.destructive,
                openWorldHint=True,
            ),
        )
    return server
