"""MCP tool get_efficiency: how well an ended job, workflow run or sweep used what it asked for, with
suggestions (``asked 2G, peaked at 101M: ask for 128M``) an agent can apply to its next submission."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from svc_host.domain.bounds import MAX_ROW_ID
from svc_host.errors import InvalidRequestError
from svc_host.mcp.context import host_of, transport_name
from svc_host.mcp.results import tool_result
from svc_host.mcp.tools_jobs import checked_job_id
from svc_host.plugin_core.records import ToolSpec
from svc_host.services import efficiency as efficiency_views


@tool_result
async def get_efficiency(
    ctx: Context,
    job_id: str | None = None,
    run_id: str | None = None,
    sweep_run_id: Annotated[int | None, Field(ge=1, le=MAX_ROW_ID)] = None,
    transport: str | None = None,
) -> dict[str, Any]:
    chosen = (("job_id", job_id), ("run_id", run_id), ("sweep_run_id", sweep_run_id))
    given = [name for name, value in chosen if value is not None]
    if len(given) != 1:
        raise InvalidRequestError(
            f"give exactly one of job_id, run_id or sweep_run_id (got {', '.join(given) or 'none'})"
        )
    host = host_of(ctx)
    if job_id is not None:
        return await efficiency_views.for_job(host, transport_name(transport), checked_job_id(job_id))
    if run_id is not None:
        return await efficiency_views.for_run(host, run_id)
    return await efficiency_views.for_sweep(host, sweep_run_id or 0)


TOOLS = [
    ToolSpec(
        name="get_efficiency",
        function=get_efficiency,
        description=(
            "How efficiently ended jobs used what they asked for, from Slurm accounting: CPU (used/allocated), "
            "memory (peak RSS/allocated), time (elapsed/limit) in percent, GPUs allocated, and for completed jobs "
            "that used under 80% a concrete suggestion such as 'asked 2G, peaked at 101M: ask for 128M'. Give "
            "exactly one of job_id (with transport for an SSH profile), run_id (a workflow run: every job and a "
            "summary) or sweep_run_id (every job of every cell and a summary)."
        ),
        read_only=True,
    ),
]
