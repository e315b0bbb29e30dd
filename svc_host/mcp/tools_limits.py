"""MCP tool get_limits: the site's job-count limits for the user of one transport (svc's own addition)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from svc_host.mcp.context import host_of, transport_name
from svc_host.mcp.results import tool_result
from svc_host.plugin_core.records import ToolSpec
from svc_host.services.limits import limits_view


@tool_result
async def get_limits(ctx: Context, transport: str | None = None) -> dict[str, Any]:
    return await limits_view(host_of(ctx), transport_name(transport))


TOOLS = [
    ToolSpec(
        name="get_limits",
        function=get_limits,
        description=(
            "The cluster's job-count limits for your user: submit_limits (MaxSubmitJobs of the association, "
            "MaxSubmitJobsPerUser/GrpSubmitJobs of the default QOS, MaxJobCount), which make sbatch refuse "
            "jobs, and run_limits (MaxJobs...), which keep jobs pending; each with in_queue, the jobs it "
            "counts now (every array task counts). Also max_array_size, the QOS that set limits, and "
            "waiting_submissions: workflow and sweep jobs svc holds back until they fit. Without transport: "
            "the local scheduler; else an SSH profile name."
        ),
        read_only=True,
    ),
]
