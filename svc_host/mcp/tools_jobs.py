"""MCP tools for single jobs and resources: submit_job, list_jobs, get_job_status, cancel_job,
get_job_logs, get_resources (shapes exactly as the MCP spec).

``list_jobs`` and ``get_resources`` read the scheduler snapshots REST lists read (``svc_host.runtime.snapshots``):
an answer at most about a second old, shared with the monitor's tick and every other client of the process
(``list_jobs`` asks for the user's jobs alone when no fresh whole queue is at hand). ``get_job_status`` answers a
live job from the scheduler's line and lets the monitor store it after the answer (``jobs.current``).
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from svc_host.domain.bounds import MAX_JOB_ID, MAX_OFFSET
from svc_host.domain.jobs import JobStatus
from svc_host.domain.submission import Environment, JobDefinition, Resources
from svc_host.errors import InvalidRequestError
from svc_host.mcp.context import host_of, transport_name
from svc_host.mcp.results import tool_result
from svc_host.plugin_core.records import ToolSpec
from svc_host.services import jobs
from svc_host.services.jobs import MAX_TAIL_LINES, last_lines
from svc_host.slurm import arrays
from svc_host.transports.base import LOG_CHUNK_LIMIT, LogChunk

PARTITION = re.compile(r"^[A-Za-z0-9_.-]{1,256}$")


def checked_job_id(job_id: str) -> str:
    """``job_id`` (surrounding spaces removed) once :func:`svc_host.slurm.arrays.checked_job_id`, the check every
    interface makes, takes it and it is not 0 (Slurm numbers jobs from 1); else ``{success: false, error}``."""
    job_id = job_id.strip()
    try:
        checked = arrays.checked_job_id(job_id)
    except arrays.MisspelledJobId as exc:
        raise InvalidRequestError(f"job_id: {exc}") from None
    except ValueError:
        checked = None
    if checked is None or int(arrays.array_of(checked) or checked) == 0:
        shown = job_id if len(job_id) <= 40 else job_id[:40] + "..."
        raise InvalidRequestError(
            f"job_id must be digits or '<id>_<index>' for an array task (job ids are 1 to {MAX_JOB_ID}), got {shown!r}"
        )
    return checked


def _partition(partition: str | None) -> str | None:
    if partition is not None and not PARTITION.match(partition):
        raise InvalidRequestError(
            f"partition must be a Slurm partition name (letters, digits, '.', '_', '-'), got {partition[:40]!r}"
        )
    return partition


def _summary(job: JobStatus) -> dict[str, Any]:
    return {
        "name": job.name or "",
        "job_id": job.job_id,
        "status": job.state.value,
        "partition": job.partition or "",
        "nodes": str(job.nodes) if job.nodes is not None else "",
    }


@tool_result
async def submit_job(
    ctx: Context,
    command: str,
    name: str = "job",
    nodes: int = 1,
    gpus_per_node: int = 0,
    ntasks_per_node: int = 1,
    cpus_per_task: int = 1,
    memory_per_node: str | None = None,
    time_limit: str | None = None,
    partition: str | None = None,
    nodelist: str | None = None,
    gpu_type: str | None = None,
    conda: str | None = None,
    venv: str | None = None,
    env_vars: dict[str, str] | None = None,
    log_dir: str = "logs",
    work_dir: str | None = None,
    transport: str | None = None,
    test_only: bool = False,
) -> dict[str, Any]:
    host = host_of(ctx)
    target = transport_name(transport)
    host.transport(target)  # an unknown transport is the first thing to report
    if work_dir is None:
        if host.transports.spec(target).remote:
            raise InvalidRequestError(
                f"work_dir is required with transport={target!r}: give a directory on the cluster"
            )
        work_dir = os.getcwd()
    definition = JobDefinition(
        name=name,
        command=command,
        resources=Resources(
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            ntasks_per_node=ntasks_per_node,
            cpus_per_task=cpus_per_task,
            memory_per_node=memory_per_node,
            time_limit=time_limit,
            partition=partition,
            nodelist=nodelist,
            gpu_type=gpu_type,
        ),
        environment=Environment(conda=conda, venv=venv, env_vars=env_vars or {}),
        log_dir=log_dir,
        work_dir=work_dir,
    )
    if test_only:
        from svc_host.services import pending

        return {**(await pending.fit_answer(host, definition, transport=target)), "transport": target}
    record = await jobs.submit(host, definition, transport=target, source="mcp")
    return {
        "job_id": record.job_id,
        "name": record.name,
        "status": record.state,
        "partition": record.partition or "",
        "nodes": str(record.nodes or 1),
        "transport": target,
        "stdout_path": record.stdout_path,
        "stderr_path": record.stderr_path,
    }


@tool_result
async def list_jobs(ctx: Context, transport: str | None = None) -> dict[str, Any]:
    host = host_of(ctx)
    target = transport_name(transport)
    user = await host.transport(target).user()
    shared = host.transports.snapshots
    queue = (await (shared.queue(target) if user is None else shared.user_queue(target, user))).value
    mine = [job for job in queue if user is None or job.user == user]
    return {"jobs": [_summary(job) for job in mine], "count": len(mine)}


@tool_result
async def get_job_status(ctx: Context, job_id: str, transport: str | None = None) -> dict[str, Any]:
    view = await jobs.current(host_of(ctx), transport_name(transport), checked_job_id(job_id))
    if view.record is not None and view.status.state.is_terminal:
        from svc_host.services.efficiency import efficiency_of

        efficiency = efficiency_of(view.record)
        if efficiency is not None:
            return {**_summary(view.status), "efficiency": efficiency}
    return _summary(view.status)


@tool_result
async def cancel_job(ctx: Context, job_id: str, transport: str | None = None) -> dict[str, Any]:
    job_id = checked_job_id(job_id)
    before = await jobs.cancel(host_of(ctx), transport_name(transport), job_id)
    return {"job_id": job_id, "message": f"cancelled job {job_id} (was {before.state.value})"}


def _stream(name: str, chunk: LogChunk | None) -> dict[str, Any]:
    """The paging fields of one stream: where its text starts and ends in the file, the file's size and
    whether more follows (read it with ``offset`` = ``<name>_next_offset``)."""
    if chunk is None:
        return {f"{name}_offset": 0, f"{name}_next_offset": 0, f"{name}_size": None, f"{name}_truncated": False}
    return {
        f"{name}_offset": chunk.offset,
        f"{name}_next_offset": chunk.next_offset,
        f"{name}_size": chunk.size,
        f"{name}_truncated": chunk.size is not None and chunk.next_offset < chunk.size,
    }


@tool_result
async def get_job_logs(
    ctx: Context,
    job_id: str,
    job_name: str | None = None,
    transport: str | None = None,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
    tail_bytes: Annotated[int | None, Field(ge=1, le=LOG_CHUNK_LIMIT)] = None,
    tail_lines: Annotated[int | None, Field(ge=1, le=MAX_TAIL_LINES)] = None,
) -> dict[str, Any]:
    job_id = checked_job_id(job_id)
    chosen = [
        name
        for name, value in (("offset", offset or None), ("tail_bytes", tail_bytes), ("tail_lines", tail_lines))
        if value
    ]
    if len(chosen) > 1:
        raise InvalidRequestError(f"give at most one of offset, tail_bytes and tail_lines, got {' and '.join(chosen)}")
    found = await jobs.logs(
        host_of(ctx),
        transport_name(transport),
        job_id,
        job_name=job_name,
        stdout_offset=offset,
        stderr_offset=offset,
        limit=tail_bytes or LOG_CHUNK_LIMIT,
        tail=tail_bytes is not None or tail_lines is not None,
    )
    out, err = found.stdout, found.stderr
    if tail_lines is not None:
        out, err = (last_lines(chunk, tail_lines) if chunk else None for chunk in (out, err))
    return {
        "job_id": job_id,
        "stdout": out.content if out else "",
        "stderr": err.content if err else "",
        "log_files": [chunk.path for chunk in (found.stdout, found.stderr) if chunk is not None and chunk.exists],
        **_stream("stdout", out),
        **_stream("stderr", err),
    }


@tool_result
async def get_resources(ctx: Context, partition: str | None = None, transport: str | None = None) -> dict[str, Any]:
    partition = _partition(partition)
    host = host_of(ctx)
    target = transport_name(transport)
    host.transport(target)  # an unknown transport is the first thing to report
    shared = host.transports.snapshots
    if host.transports.spec(target).remote:
        snapshots = (await shared.resources(target, partition)).value
        if partition is not None and not snapshots:
            raise InvalidRequestError(f"partition {partition!r} not found on {target!r}")
        return {"partition": partition, "resources": [snap.model_dump(mode="json") for snap in snapshots]}
    if partition is None:
        snap = (await shared.resources_total(target)).value
    else:
        found = (await shared.resources(target, partition)).value
        if not found:
            raise InvalidRequestError(f"partition {partition!r} not found")
        snap = found[0]
    return snap.model_dump(mode="json", exclude={"timestamp", "has_available_gpus"})


TOOLS = [
    ToolSpec(
        name="submit_job",
        function=submit_job,
        description=(
            "Submit a shell command as a Slurm batch job and return its job_id (a string). Resources default "
            "to 1 node, 0 GPUs (CPU-only), 1 task, 1 CPU; time_limit like '4:00:00' or '1-00:00:00'. Logs go "
            "to log_dir (relative to work_dir) as <name>-<job_id>.out/.err. Without transport the job runs on "
            "the local scheduler in the server's current directory; with transport (an SSH profile name, see "
            "list_ssh_profiles) work_dir is required and is a directory on the cluster. test_only=true submits "
            "nothing: it asks Slurm (sbatch --test-only) whether this exact job would start now and where, and "
            "returns fits, an explanation, start_estimate {at, nodes, partition, processors} and Slurm's refusal "
            "if it would not accept it."
        ),
    ),
    ToolSpec(
        name="list_jobs",
        function=list_jobs,
        description=(
            "List the current user's pending and running jobs (name, job_id, status, partition, nodes). With "
            "transport, the user is the login svc connects to that cluster as (the profile's username, or "
            "the User of its ~/.ssh/config entry). The queue is read at most about a second ago, shared with "
            "every other client of this server."
        ),
        read_only=True,
        waits_for_start=False,  # the scheduler only: answered while the store loads
    ),
    ToolSpec(
        name="get_job_status",
        function=get_job_status,
        description=(
            "Get one job's status (PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, "
            "NODE_FAIL, ...). job_id is a string: digits, or '<id>_<index>' for an array task. An ended job "
            "svc submitted also carries efficiency (CPU, memory, time used vs asked, with suggestions) once "
            "accounting recorded its usage; get_efficiency explains a missing one."
        ),
        read_only=True,
    ),
    ToolSpec(
        name="cancel_job",
        function=cancel_job,
        description="Cancel a pending or running job. Fails if the job already ended.",
        destructive=True,
    ),
    ToolSpec(
        name="get_job_logs",
        function=get_job_logs,
        description=(
            "Read a job's stdout and stderr, at most 256 KiB of each per call. log_files lists the files found. "
            "Pass job_name to help find the logs of a job the scheduler has already forgotten. By default the "
            "logs are read from their start; tail_lines=N (or tail_bytes=N) returns their end instead, where a "
            "traceback is. For each stream, <stream>_offset and <stream>_next_offset give the byte range "
            "returned, <stream>_size the file's size, and <stream>_truncated is true when more follows: call "
            "again with offset=<stream>_next_offset to read on (offset applies to both streams). Give at most "
            "one of offset, tail_bytes and tail_lines."
        ),
        read_only=True,
    ),
    ToolSpec(
        name="get_resources",
        function=get_resources,
        description=(
            "GPU and node availability. Locally: one object with totals for the partition (or the whole "
            "cluster when partition is omitted). With transport: a 'resources' list with one entry per "
            "partition (or just the one asked for). Read at most about a second ago, shared with every other "
            "client of this server."
        ),
        read_only=True,
        waits_for_start=False,  # the scheduler only: answered while the store loads
    ),
]
