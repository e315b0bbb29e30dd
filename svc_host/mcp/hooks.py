"""The host's own MCP tools, registered through ``svc_mcp_tools`` like any plugin's."""

from __future__ import annotations

from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.records import ToolSpec


@hookimpl
def svc_mcp_tools() -> list[ToolSpec]:
    from svc_host.mcp import (
        tools_config,
        tools_efficiency,
        tools_jobs,
        tools_limits,
        tools_pending,
        tools_sessions,
        tools_sync,
        tools_wait,
        tools_workflows,
    )

    return [
        *tools_jobs.TOOLS,
        *tools_pending.TOOLS,
        *tools_workflows.TOOLS,
        *tools_sync.TOOLS,
        *tools_config.TOOLS,
        *tools_limits.TOOLS,
        *tools_wait.TOOLS,
        *tools_efficiency.TOOLS,
        *tools_sessions.TOOLS,
    ]
