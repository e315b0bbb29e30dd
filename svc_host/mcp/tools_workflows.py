"""MCP tools for workflows: create_workflow, validate_workflow, run_workflow, wait_workflow_run, steer_sweep,
list_workflows, get_workflow.

Paths are confined to the allowed roots (the server's working directory, the workflows directory, the local
directories of the profiles' mounts, ``svc mcp --root`` directories; see ``svc_host.workflows.files``; symlinks
resolved): anything else is ``Path '<path>' is outside allowed directories``. The argument errors the spec
defines (a ``mount`` without an SSH transport or not in its profile, ``python:`` values in ``args``, a bad
``sweep``, a document that is no workflow) depend on no file, so they are answered before any path is checked.

``run_workflow`` waits at most ``wait_seconds`` (default 60) for the run to end, sending MCP progress
notifications (jobs finished / total) while it waits, then returns the run id and the results so far
with ``all_completed`` false; the run goes on in the background and ``wait_workflow_run`` follows it by
``run_id`` (a sweep by ``sweep_run_id``) without submitting anything.

With ``sweep`` it blocks until every cell has ended (``wait_seconds`` does not apply), sending a progress
notification (cells ended / cell_count) on every change and at least every 10 s, so a client that resets its
timeout on progress keeps waiting. ``dry_run`` with ``sweep`` is refused: a dry run previews a plain run and
a sweep always executes. ``steer_sweep`` pauses or resumes a sweep by ``sweep_run_id`` (another client's call,
or the same agent's while its ``run_workflow`` call blocks).
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from svc_host.domain.bounds import MAX_ROW_ID
from svc_host.errors import InvalidRequestError, WorkflowError
from svc_host.host import Host
from svc_host.mcp.context import host_of, transport_name
from svc_host.mcp.results import tool_result
from svc_host.plugin_core.records import ToolSpec
from svc_host.settings.mounts import cluster_paths
from svc_host.sweeps.matrix import parse_sweep
from svc_host.workflows.dag import raw_jobs
from svc_host.workflows.files import allowed_roots, confine, read_text, scan, write_workflow_file
from svc_host.workflows.load import check_document, check_workflow
from svc_host.workflows.plan import FINAL, RUN_COMPLETED
from svc_host.workflows.source import YamlSyntaxError, dump, nesting_problem, parse
from svc_host.workflows.templating import python_problems

if TYPE_CHECKING:  # the ORM and the run services are imported by the tools that use them, not at server start
    from svc_host.store.tables import SweepRunRecord
    from svc_host.sweeps.cells import SweepRequest
    from svc_host.workflows.store import RunSnapshot

MAX_WAIT_SECONDS = 3600.0
SWEEP_HEARTBEAT_SECONDS = 10.0


def _roots(host: Host) -> list[Path]:
    return allowed_roots(host.paths, host.transports.config.profiles)


async def _read(host: Host, yaml_path: str) -> tuple[Path, str]:
    path = confine(yaml_path, _roots(host))
    return path, await asyncio.to_thread(read_text, path, shown=yaml_path)


@tool_result
async def create_workflow(
    ctx: Context,
    name: str,
    jobs: list[dict[str, Any]],
    output_path: str,
    args: dict[str, Any] | None = None,
    default_project: str | None = None,
) -> dict[str, Any]:
    document: dict[str, Any] = {"name": name}
    if args:
        document["args"] = args
    if default_project is not None:
        document["default_project"] = default_project
    document["jobs"] = jobs
    workflow, problems = await asyncio.to_thread(check_document, document)
    if problems or workflow is None:
        raise WorkflowError(problems)
    path = confine(output_path, _roots(host_of(ctx)))
    text = await asyncio.to_thread(dump, document)
    await asyncio.to_thread(write_workflow_file, path, text)
    names = [job.name for job in workflow.jobs]
    return {
        "path": str(path),
        "name": workflow.name,
        "job_count": len(names),
        "job_names": names,
        "message": f"workflow {workflow.name!r} with {len(names)} job(s) written to {path}",
    }


@tool_result
async def validate_workflow(ctx: Context, yaml_path: str) -> dict[str, Any]:
    from svc_host.workflows import views

    _, text = await _read(host_of(ctx), yaml_path)
    workflow, problems = await asyncio.to_thread(check_workflow, text)
    if workflow is not None and not problems:
        return {
            "name": workflow.name,
            "valid": True,
            "job_count": len(workflow.jobs),
            "jobs": [views.brief_job(job) for job in workflow.jobs],
        }
    data = await asyncio.to_thread(_raw, text)
    found = raw_jobs(data.get("jobs"))
    return {
        "name": data.get("name") if isinstance(data.get("name"), str) else None,
        "valid": False,
        "job_count": len(found),
        "jobs": [
            {"name": job.name, "depends_on": [str(d) for d in job.dependencies], "command": None} for job in found
        ],
        "errors": problems,
    }


def _raw(text: str) -> dict[str, Any]:
    try:
        data = parse(text).data
    except YamlSyntaxError:
        return {}
    return data if isinstance(data, dict) else {}


@tool_result
async def run_workflow(
    ctx: Context,
    yaml_path: str,
    from_job: str | None = None,
    to_job: str | None = None,
    single_job: str | None = None,
    dry_run: bool = False,
    args: dict[str, Any] | None = None,
    sweep: dict[str, Any] | None = None,
    transport: str | None = None,
    mount: str | None = None,
    wait_seconds: float = 60.0,
) -> dict[str, Any]:
    from svc_host.sweeps.cells import SweepRequest
    from svc_host.workflows.prepare import RunRequest

    wait = _wait_limit(wait_seconds)
    spec = None
    if sweep is not None:
        if dry_run:
            raise InvalidRequestError(
                "dry_run cannot be combined with sweep: dry_run previews a plain run and a sweep always "
                "executes; drop one of them"
            )
        spec = parse_sweep(sweep)
    host = host_of(ctx)
    _check_run_arguments(host, transport_name(transport), mount, args)
    path, text = await _read(host, yaml_path)
    request = RunRequest(
        yaml_path=path,
        args=args,
        from_job=from_job,
        to_job=to_job,
        single_job=single_job,
        transport=transport_name(transport),
        mount=mount,
        text=text,
    )
    if spec is not None:
        return await _run_sweep(ctx, host, SweepRequest(run=request, spec=spec, source="mcp"))
    engine = await host.workflow_engine()
    prepared = await engine.prepare(request)
    if dry_run:
        jobs = prepared.preview()
        return {"dry_run": True, "workflow": prepared.workflow.name, "jobs_to_execute": jobs, "count": len(jobs)}
    run_id = await engine.create(prepared, triggered_by="mcp")
    await engine.launch(run_id)
    return await _wait_run(ctx, host, run_id, wait)


def _check_run_arguments(host: Host, transport: str, mount: str | None, args: dict[str, Any] | None) -> None:
    """The spec's errors of ``run_workflow``'s own arguments, before the file is looked for: ``mount`` without an
    SSH transport (``mount requires an SSH transport; ...``) or not in the transport's profile, an unknown
    transport when a mount is given, ``python:`` values in ``args``. ``prepare`` checks them again with the
    file's ``default_project`` and args."""
    if args is not None:
        problem = nesting_problem(args, "args")
        problems = [problem] if problem is not None else python_problems("args", args)
        if problems:
            raise WorkflowError(problems)
    if mount is not None:
        host.transport(transport)
        profiles = host.transports.config.profiles
        cluster_paths(profiles, host.transports.spec(transport), mount, work_dir=None, log_dir=".")


def _wait_limit(wait_seconds: float) -> float:
    """``wait_seconds`` within 0 to ``MAX_WAIT_SECONDS``; not a number is refused."""
    if not math.isfinite(wait_seconds):
        raise InvalidRequestError(f"wait_seconds must be a number of seconds, got {wait_seconds}")
    return min(max(wait_seconds, 0.0), MAX_WAIT_SECONDS)


async def _wait_run(ctx: Context, host: Host, run_id: str, timeout: float) -> dict[str, Any]:
    """Wait up to ``timeout`` seconds for a workflow run, reporting progress; ``run_workflow``'s normal shape."""
    from svc_host.workflows import views

    engine = await host.workflow_engine()
    reported: list[int] = []

    async def progress(snap: RunSnapshot) -> None:
        done = sum(1 for job in snap.jobs if snap.job_status(job) in FINAL)
        if reported and reported[-1] == done:
            return
        reported.append(done)
        await ctx.report_progress(
            done, len(snap.jobs), f"run {run_id} {snap.run.status}: {done}/{len(snap.jobs)} jobs done"
        )

    snap = await engine.wait(run_id, timeout, progress)
    return {
        "workflow": snap.run.workflow_name,
        "results": views.results(snap, await engine.attempts(run_id)),
        "all_completed": snap.run.status == RUN_COMPLETED,
        "run_id": run_id,
        "status": snap.run.status,
        "run_error": snap.run.error,
        "queued": host.submit_throttle.reason(run_id),  # why jobs wait to be submitted (svc_host.submit_throttle)
    }


async def _run_sweep(ctx: Context, host: Host, request: SweepRequest) -> dict[str, Any]:
    from svc_host.sweeps.views import mcp_result

    orchestrator = await host.sweep_orchestrator()
    sweep = await orchestrator.submit(request)
    if sweep.id is None:
        raise LookupError("the sweep row got no id")
    return mcp_result(await _wait_sweep(ctx, host, sweep.id, math.inf))


async def _wait_sweep(ctx: Context, host: Host, sweep_id: int, timeout: float) -> SweepRunRecord:
    """Wait up to ``timeout`` for a sweep's cells to end, reporting progress on every change and heartbeat."""
    from svc_host.sweeps.status import TERMINAL

    orchestrator = await host.sweep_orchestrator()
    base = -1
    beats = 0

    async def progress(now: SweepRunRecord) -> None:
        nonlocal base, beats
        if base == now.cell_count:
            return  # the end was reported
        done = now.cells_completed + now.cells_failed + now.cells_cancelled
        # Progress must grow with every notification: heartbeats creep towards the next whole cell, and the last
        # whole cell is reached only with the sweep's own end (its status settles after its last cell ended).
        settled = now.status in TERMINAL and done == now.cell_count
        shown = done if settled else min(done, now.cell_count - 1)
        beats = 0 if settled or shown != base else beats + 1
        base = shown
        paused = f" (paused, {now.cells_held} held)" if now.paused_at is not None else ""
        await ctx.report_progress(
            shown + beats / (beats + 1),
            now.cell_count,
            f"sweep {now.id} {now.status}{paused}: {done}/{now.cell_count} cells ended "
            f"({now.cells_completed} completed, {now.cells_failed} failed, {now.cells_cancelled} cancelled), "
            f"{now.cells_running} running",
        )

    return await orchestrator.wait(sweep_id, progress, timeout=timeout, heartbeat=SWEEP_HEARTBEAT_SECONDS)


@tool_result
async def wait_workflow_run(
    ctx: Context,
    run_id: Annotated[str | None, Field(min_length=1, max_length=64)] = None,
    sweep_run_id: Annotated[int | None, Field(ge=1, le=MAX_ROW_ID)] = None,
    wait_seconds: float = 60.0,
) -> dict[str, Any]:
    from svc_host.sweeps.status import COMPLETED as SWEEP_COMPLETED
    from svc_host.sweeps.views import mcp_result

    wait = _wait_limit(wait_seconds)
    host = host_of(ctx)
    if run_id is not None and sweep_run_id is None:
        return await _wait_run(ctx, host, run_id, wait)
    if sweep_run_id is not None and run_id is None:
        sweep = await _wait_sweep(ctx, host, sweep_run_id, wait)
        return {**mcp_result(sweep), "all_completed": sweep.status == SWEEP_COMPLETED}
    raise InvalidRequestError(
        "give exactly one of run_id (a workflow run, as run_workflow returned it) and sweep_run_id (a sweep)"
    )


@tool_result
async def steer_sweep(
    ctx: Context,
    sweep_run_id: Annotated[int, Field(ge=1, le=MAX_ROW_ID)],
    action: Literal["pause", "resume"],
) -> dict[str, Any]:
    from svc_host.sweeps.views import mcp_result

    orchestrator = await host_of(ctx).sweep_orchestrator()
    steer = orchestrator.pause if action == "pause" else orchestrator.resume
    return mcp_result(await steer(sweep_run_id))


@tool_result
async def list_workflows(ctx: Context, directory: str = ".") -> dict[str, Any]:
    host = host_of(ctx)
    roots = _roots(host)
    path = confine(directory, roots)
    if not path.is_dir():
        raise WorkflowError([f"directory {directory!r} is not a directory"])
    found = await asyncio.to_thread(scan, path, roots)
    workflows = [
        {"path": item.path, "name": item.name, "job_count": item.job_count, "job_names": item.job_names}
        for item in found
    ]
    return {"workflows": workflows, "count": len(workflows)}


@tool_result
async def get_workflow(ctx: Context, yaml_path: str) -> dict[str, Any]:
    from svc_host.workflows import views

    _, text = await _read(host_of(ctx), yaml_path)
    workflow, problems = await asyncio.to_thread(check_workflow, text)
    if problems or workflow is None:
        raise WorkflowError(problems)
    return views.detail(workflow, text)


_JOB_FORMAT = (
    "Each job: name (letters, digits, '-', '_'; unique), command (string or list) or script_path (a batch "
    "script file; not both), depends_on (job names, optionally prefixed 'afterok:', 'after:', 'afterany:' or "
    "'afternotok:'), retry (default 0), retry_delay (seconds, default 60), resources (nodes, gpus_per_node, "
    "ntasks_per_node, cpus_per_task, memory_per_node, time_limit, partition, nodelist), environment (conda, "
    "venv, container, env_vars), log_dir, work_dir. Strings may use {{ arg }} templates filled from args."
)

TOOLS = [
    ToolSpec(
        name="create_workflow",
        function=create_workflow,
        description=(
            "Write a workflow YAML file (a DAG of jobs) to output_path (.yaml/.yml, inside the server's working "
            "directory, the workflows directory, a mount's local directory or a svc mcp --root directory; a "
            "relative path is relative to the working directory). Replaces an existing workflow "
            f"file, never another file. Every problem is reported at once. {_JOB_FORMAT}"
        ),
        destructive=True,
    ),
    ToolSpec(
        name="validate_workflow",
        function=validate_workflow,
        description=(
            "Check a workflow YAML file: syntax, job structure, templates, dependencies and cycles. Returns "
            "valid, the jobs, and errors (each with its line) when invalid."
        ),
        read_only=True,
    ),
    ToolSpec(
        name="run_workflow",
        function=run_workflow,
        description=(
            "Run a workflow: sync its mounts (with transport), submit every job in dependency order, then wait "
            "up to wait_seconds (default 60, at most 3600) for the run to finish, sending progress "
            "notifications. Returns workflow, results (job -> {job_id, status, attempts: every attempt's job_id, "
            "state, exit_code, node, resources and reason: why the next attempt was made, or none}), "
            "all_completed, run_id and status; if the run is still going when the wait ends, all_completed is "
            "false and the run continues in the background: follow it with wait_workflow_run(run_id=...), "
            "never by calling run_workflow again, which would submit the whole workflow a second time. "
            "from_job/to_job cut the run order, single_job runs one job alone, dry_run previews the jobs "
            "without submitting. args are merged over the file's args ('python:' values are refused). "
            "transport is an SSH profile (default: local); mount is one of its mounts, the root for "
            "work_dir and log_dir. sweep {matrix: {arg: [values...]}, fail_fast (default false), max_parallel "
            "(default 4)} runs one cell per combination of values (at most 1000), at most max_parallel at "
            "once, and blocks until every cell has ended (progress notifications: cells ended / cell_count); "
            "it returns sweep_run_id, status, cell_count, cells_completed, cells_failed, cells_cancelled. "
            "fail_fast stops launching cells after the first failure; max_failures N (instead of fail_fast) "
            "stops once more than N cells have failed and cancels the cells left, launched or not (0: at the "
            "first failure). The answer also has paused, cells_held, max_failures and error (why it stopped). "
            "dry_run cannot be combined with sweep."
        ),
    ),
    ToolSpec(
        name="steer_sweep",
        function=steer_sweep,
        description=(
            "Pause or resume a running sweep by sweep_run_id (from run_workflow's progress messages, "
            "'sweep <id> ...'). action 'pause': no new cell is launched and the queued jobs of launched cells are "
            "held in Slurm (running jobs run on); 'resume': the held jobs are released and cells are launched "
            "again. A second pause or resume changes nothing; a sweep that ended or is being cancelled is an "
            "error. Returns what run_workflow returns for a sweep: sweep_run_id, status, cell_count, "
            "cells_completed, cells_failed, cells_cancelled, paused, cells_held, max_failures, error."
        ),
    ),
    ToolSpec(
        name="wait_workflow_run",
        function=wait_workflow_run,
        description=(
            "Keep waiting for a run that run_workflow started, without submitting anything: give run_id (from "
            "run_workflow's answer) and wait up to wait_seconds (default 60, at most 3600), with progress "
            "notifications. Returns what run_workflow returns: workflow, results (job -> {job_id, status, "
            "attempts}), all_completed, run_id, status, run_error, queued. For a sweep give sweep_run_id instead "
            "(it is in "
            "run_workflow's progress messages, 'sweep <id> ...'): returns sweep_run_id, status, cell_count, "
            "cells_completed, cells_failed, cells_cancelled and all_completed. queued (a run's; else null) says "
            "why jobs wait to be submitted: svc holds them under the cluster's job limits (see get_limits) and "
            "submits them as jobs end. all_completed is true when "
            "everything completed; while status is not yet completed, failed or cancelled the run goes on: "
            "call again. A run that already ended returns at once."
        ),
        read_only=True,
    ),
    ToolSpec(
        name="list_workflows",
        function=list_workflows,
        description=(
            "Find workflow YAML files (with both 'name' and 'jobs') under a directory (default '.'), skipping "
            "hidden directories, node_modules, .venv and __pycache__."
        ),
        read_only=True,
    ),
    ToolSpec(
        name="get_workflow",
        function=get_workflow,
        description=(
            "Read a workflow file: name, args, default_project, every job with its resources, environment "
            "and retries (templates filled from the file's args), and the raw YAML."
        ),
        read_only=True,
    ),
]
