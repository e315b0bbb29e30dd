"""MCP tools for interactive sessions: start_session, list_sessions, stop_session (not in the public MCP spec;
docs/interfaces.md says what was chosen).

An MCP server cannot hand out a link into a session: the one-time links are minted and served by the running
``svc serve`` (its sessions origin), which ``svc mcp`` is not. Every session in a result therefore carries
``open_command``: ``svc session open <id> -t <cluster>``, which opens the session in the user's browser through a
local listener of its own, with or without ``svc serve``. An agent hands that line to its user.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from svc_host.mcp.context import host_of, transport_name
from svc_host.mcp.results import tool_result
from svc_host.mcp.tools_jobs import checked_job_id
from svc_host.plugin_core.records import ToolSpec
from svc_host.sessions import manage
from svc_host.sessions.request import SessionRequest


def _with_command(view: dict[str, Any]) -> dict[str, Any]:
    return {**view, "open_command": f"svc session open {view['job_id']} -t {view['cluster']}"}


@tool_result
async def start_session(
    ctx: Context,
    kind: str,
    fields: dict[str, Any] | None = None,
    gpus: str | None = None,
    time_limit: str | None = None,
    partition: str | None = None,
    transport: str | None = None,
) -> dict[str, Any]:
    host = host_of(ctx)
    target = transport_name(transport)
    request = SessionRequest(kind=kind, fields=fields or {}, gpus=gpus, time_limit=time_limit, partition=partition)
    row = await manage.start(host, request, transport=target, source="mcp")
    return {"session": _with_command(manage.views(host, [row])[0])}


@tool_result
async def list_sessions(ctx: Context, transport: str | None = None) -> dict[str, Any]:
    host = host_of(ctx)
    rows = await manage.listed(host, transport)
    return {"sessions": [_with_command(view) for view in manage.views(host, rows)]}


@tool_result
async def stop_session(ctx: Context, job_id: str, transport: str | None = None) -> dict[str, Any]:
    job_id = checked_job_id(job_id)
    host = host_of(ctx)
    row = await manage.stop(host, transport_name(transport), job_id)
    return {"job_id": job_id, "message": f"stopping session {job_id} (its job is cancelled)", "state": row.state}


def _kinds_line() -> str:
    return "Kinds come from plugins: jupyter (fields: venv, work_dir), tensorboard (logdir, venv), command (command)."


TOOLS = [
    ToolSpec(
        name="start_session",
        function=start_session,
        description=(
            "Start an interactive session: a Slurm job running a web app (JupyterLab, TensorBoard, or a command "
            "that listens on $SVC_SESSION_PORT). " + _kinds_line() + " gpus is N or TYPE:N ('1', 'a100:1'); "
            "time_limit like '2:00:00'. Returns the session (state queued, then starting, ready, ended) with "
            "open_command: the line the user runs to open it in a browser (svc session open ID -t CLUSTER)."
        ),
    ),
    ToolSpec(
        name="list_sessions",
        function=list_sessions,
        description=(
            "List interactive sessions newest first (of one cluster with transport, else of all): state, why an "
            "ended one ended (stopped, time_limit, app_exited with its stderr tail, node_failure, start_timeout, "
            "idle_timeout, job_ended), time left, and open_command to open a ready one."
        ),
    ),
    ToolSpec(
        name="stop_session",
        function=stop_session,
        description="Stop an interactive session (its Slurm job is cancelled). Fails if it already ended.",
        destructive=True,
    ),
]
