"""MCP tool ``explain_pending``: why a job is pending and when it should start (not in the MCP spec; see
docs/interfaces.md, "Why pending")."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from svc_host.mcp.context import host_of, transport_name
from svc_host.mcp.results import tool_result
from svc_host.mcp.tools_jobs import checked_job_id
from svc_host.plugin_core.records import ToolSpec
from svc_host.services import pending


@tool_result
async def explain_pending(ctx: Context, job_id: str, transport: str | None = None) -> dict[str, Any]:
    answers = await pending.explain(host_of(ctx), transport_name(transport), [checked_job_id(job_id)])
    return answers[0]


TOOLS = [
    ToolSpec(
        name="explain_pending",
        function=explain_pending,
        description=(
            "Why a job is pending, as a sentence naming the limit and the value that binds (a QOS or account limit "
            "with what your running jobs already use, free GPUs in the partition, down nodes, the partition's "
            "MaxTime, a hold, a dependency that can never be met), plus Slurm's start estimate. Returns pending, "
            "status, reason (Slurm's word), explanation, needs_action (true: it will not start unless something "
            "changes), limit {scope, name, field, value, used} and start_estimate {at, nodes} (null when Slurm "
            "has none). A job that is not pending is answered with pending=false."
        ),
        read_only=True,
    ),
]
