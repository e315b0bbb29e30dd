"""The site's MCP tool. Its own module, imported only by ``svc_mcp_tools``: the tool's parameter annotations
must resolve at module level for the MCP server to build the tool's schema."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from svc_host.plugin import ToolSpec, tool_host, tool_result

from svc_example_site.usage import site_usage


@tool_result
async def site_account_usage(ctx: Context) -> dict[str, Any]:
    return await site_usage(tool_host(ctx))


TOOLS = [
    ToolSpec(
        name="site_account_usage",
        function=site_account_usage,
        description="Fair-share standing of the site's Slurm account (sshare): raw shares, raw usage, fair share.",
        read_only=True,
    )
]
