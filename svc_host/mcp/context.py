"""How a tool reaches the process's ``Host`` (the MCP server's lifespan context) and picks a transport."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from svc_host.host import Host
from svc_host.plugin_core.view import PluginHost

LOCAL = "local"


def host_of(ctx: Context[Any, Any]) -> Host:
    host = ctx.request_context.lifespan_context
    if not isinstance(host, Host):
        raise TypeError("the MCP server was not started with svc's lifespan")
    return host


def tool_host(ctx: Context[Any, Any]) -> PluginHost:
    """The server's host as a plugin's MCP tool sees it (``svc_host.plugin.tool_host``)."""
    return host_of(ctx)


def transport_name(transport: str | None) -> str:
    """``None`` and ``local`` select the local scheduler; anything else names an SSH profile."""
    return transport or LOCAL
