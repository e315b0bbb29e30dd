"""MCP tool ``wait_for_change``: wait for the next state change of a job, a workflow run or a sweep.

An agent calls it instead of polling: it returns as soon as the change is in svc's store (woken by the event hub
the dashboard's stream reads, see ``svc_host.services.waits``), or ``changed: false`` at the timeout.
"""

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
from svc_host.runtime.changes import Subject
from svc_host.services.waits import wait_for_change as wait

MAX_TIMEOUT_SECONDS = 300


def _subject(job_id: str | None, run_id: str | None, sweep_run_id: int | None, transport: str | None) -> Subject:
    given = [
        name
        for name, value in (("job_id", job_id), ("run_id", run_id), ("sweep_run_id", sweep_run_id))
        if value is not None
    ]
    if len(given) != 1:
        raise InvalidRequestError(
            "give exactly one of job_id (a job svc submitted), run_id (a workflow run) and sweep_run_id (a sweep)"
            + (f", got {' and '.join(given)}" if given else "")
        )
    if job_id is not None:
        return Subject("job", checked_job_id(job_id), transport_name(transport))
    if transport is not None:
        raise InvalidRequestError("transport applies to job_id only: a workflow run or a sweep knows its cluster")
    return Subject("run", run_id) if run_id is not None else Subject("sweep", int(sweep_run_id or 0))


@tool_result
async def wait_for_change(
    ctx: Context,
    job_id: str | None = None,
    run_id: Annotated[str | None, Field(min_length=1, max_length=64)] = None,
    sweep_run_id: Annotated[int | None, Field(ge=1, le=MAX_ROW_ID)] = None,
    transport: str | None = None,
    timeout_seconds: Annotated[float, Field(ge=0, le=MAX_TIMEOUT_SECONDS, allow_inf_nan=False)] = 60.0,
    since_status: Annotated[str | None, Field(min_length=1, max_length=64)] = None,
) -> dict[str, Any]:
    subject = _subject(job_id, run_id, sweep_run_id, transport)
    host = host_of(ctx)
    if subject.transport is not None:
        host.transport(subject.transport)  # an unknown transport is the first thing to report

    async def heartbeat(waited: float) -> None:
        await ctx.report_progress(waited, timeout_seconds, f"waiting for a change of {subject}")

    outcome = await wait(host, subject, timeout_seconds, since_status=since_status, heartbeat=heartbeat)
    observed = outcome.observed
    return {"changed": outcome.changed, "final": observed.final, **observed.view, "changes": outcome.changes}


TOOLS = [
    ToolSpec(
        name="wait_for_change",
        function=wait_for_change,
        description=(
            "Wait for the next state change of one job (job_id, with transport for an SSH profile), workflow run "
            "(run_id) or sweep (sweep_run_id) instead of polling; give exactly one. Returns as soon as the change "
            "is seen (about a second after it happens on the cluster), or at timeout_seconds (default 60, at "
            "most 300) with changed false. Answer: changed, final (true once nothing will change any more), the "
            "current state (a job: job_id, transport, name, status, raw_state, exit_code; a run: run_id, "
            "workflow, status, run_error, results; a sweep: sweep_run_id, status, cell_count and the cells_* "
            "counters) and changes, a list of {subject (job, run, cell or sweep), id, name (a run's job), from, "
            "to}. A run changes when it or one of its jobs does, a sweep when it or one of its cells does. Pass "
            "since_status (the status of your last answer) to return at once if the status moved meanwhile; a "
            "job, run or sweep that already ended returns at once with changed false and final true. Jobs must "
            "have been submitted through svc (submit_job, run_workflow)."
        ),
        read_only=True,
    ),
]
