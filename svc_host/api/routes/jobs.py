"""``/api/jobs``: the queue, submit, one job's status, cancel and logs (REST spec "Jobs")."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from svc_host.api.cluster import ClusterDep
from svc_host.api.deps import HostDep
from svc_host.api.job_list import JobListEncoder, list_form, of_user
from svc_host.api.params import MAX_OFFSET, JobId, JobIds, error_responses
from svc_host.api.snapshot_headers import SNAPSHOT_RESPONSE, snapshot_headers
from svc_host.domain.jobs import JobStatus
from svc_host.domain.submission import JOB_NAME_MAX, MAX_SCRIPT_CHARS, NO_CONTROL, NO_NUL, JobDefinition
from svc_host.domain.validation_words import describe_validation
from svc_host.errors import ConfigError, InvalidRequestError, NotConfiguredError, SvcError
from svc_host.host import Host
from svc_host.services import jobs
from svc_host.services.jobs import MAX_TAIL_LINES
from svc_host.slurm import arrays
from svc_host.store import jobs as job_repo
from svc_host.transports.base import LOG_CHUNK_LIMIT
from svc_host.workflows import store as run_repo

router = APIRouter(prefix="/api/jobs", tags=["jobs"])


class SubmitJob(BaseModel):
    """POST /api/jobs. ``script_content`` is required; the Slurm job name is ``job_name``, else ``name``."""

    model_config = ConfigDict(extra="forbid")

    script_content: str = Field(
        min_length=1,
        max_length=MAX_SCRIPT_CHARS,
        pattern=NO_NUL,
        description="A batch script (no NUL bytes); its own #SBATCH lines win.",
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=JOB_NAME_MAX,
        pattern=NO_CONTROL,
        description="Display name; the job name when job_name is absent. One line, no control characters.",
    )
    job_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=JOB_NAME_MAX,
        pattern=NO_CONTROL,
        description="The Slurm job name. One line, no control characters.",
    )
    renderer: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$",
        description="The renderer that writes the script (GET /api/plugins); default: rendering.renderer.",
    )


def definition_of(body: SubmitJob, host: Host) -> JobDefinition:
    """The job a submit body describes, with the configured log and work directories."""
    config = host.config()
    try:
        return JobDefinition(
            name=body.job_name or body.name or "job",
            script=body.script_content,
            log_dir=config.log_dir,
            work_dir=config.work_dir,
            renderer=body.renderer,
        )
    except ValidationError as exc:  # the body is checked above, so only the configured defaults can be wrong
        raise ConfigError(f"the configured job defaults are invalid: {describe_validation(exc.errors())}") from None


_JOB_ERRORS = error_responses(400, 404, 422, 502, 503, e422="validation error, or the job already ended")


class JobListItem(BaseModel):
    """A job in the list form of the REST spec."""

    name: str
    job_id: int | str = Field(
        description='The Slurm job id: an integer (`123`), or a string for an array task (`"123_4"`; squeue lists '
        "every task of an array, pending ones included, on its own row). Either opens as `/api/jobs/{job_id}`."
    )
    status: str
    depends_on: list[str]
    command: list[str]
    resources: dict[str, Any]
    partition: str
    nodes: int
    gpus: int
    gpu_types: dict[str, int] = Field(
        default_factory=dict,
        description='The GPUs per type, when Slurm tells (`{"a100": 1}` for `--gres=gpu:a100:1`); untyped ones are '
        "left out (they count in `gpus`).",
    )
    elapsed_time: str


USER_HEADER = "X-Svc-User"
"""With ``?user=me``: the login whose jobs the answer lists (an SSH profile's user, ``local``'s: the server's)."""

_LIST_RESPONSES: dict[int | str, dict[str, Any]] = {
    **error_responses(502, 503),
    200: {
        "headers": {
            **SNAPSHOT_RESPONSE[200]["headers"],
            USER_HEADER: {
                "description": "With `?user=me`: the login on the cluster whose jobs are listed, e.g. `svcdev`.",
                "schema": {"type": "string"},
            },
        }
    },
}


@router.get("", response_model=list[JobListItem], responses=_LIST_RESPONSES)
async def list_jobs(
    host: HostDep,
    transport: ClusterDep,
    user: Literal["me", "all"] = Query(
        "all",
        description="`all`: every job in the queue, every user's (the spec's answer); `me`: only the jobs of the "
        "login svc uses on this cluster (an SSH profile's user, `local`'s: the server's), named by `X-Svc-User`.",
    ),
) -> Response:
    """Every job in the cluster's queue (``?user=me``: the login's own), with the command for jobs svc submitted
    and the upstream job names of workflow jobs. The queue is a snapshot at most about a second old, shared by
    every client; ``X-Svc-Snapshot-Age`` says how old."""
    login = await _login(host, transport) if user == "me" else None
    queue = await host.transports.snapshots.queue(transport)
    key = "GET /api/jobs" if login is None else f"GET /api/jobs?user={login}"
    encoder = host.transports.snapshots.kept((key, transport), JobListEncoder)

    async def encode(jobs: list[JobStatus]) -> bytes:
        # Jobs in the queue are the ones svc still tracks as live.
        commands = await host.store.run(job_repo.live_commands, transport)
        upstream = await host.store.run(run_repo.upstream_names, transport, list(commands))
        return encoder.encode(jobs if login is None else of_user(jobs, login), commands, upstream)

    body = await queue.derive(key, encode)
    headers = snapshot_headers(queue)
    if login is not None:
        headers[USER_HEADER] = login
    return Response(body, media_type="application/json", headers=headers)


async def _login(host: Host, transport: str) -> str:
    """The login the cluster runs this server's jobs under (asked once per transport)."""
    login = await host.transport(transport).user()
    if login is None:
        raise NotConfiguredError(f"cluster {transport!r} cannot tell which login is yours: ask for ?user=all")
    return login


@router.post("", status_code=201, responses=error_responses(422, 500, 502, 503))
async def submit_job(body: SubmitJob, host: HostDep, transport: ClusterDep) -> dict[str, Any]:
    """Submit a batch script to the cluster; 201 with the job in state PENDING."""
    record = await jobs.submit(host, definition_of(body, host), transport=transport, source=host.source)
    return {
        "name": record.name,
        "job_id": int(record.job_id) if record.job_id.isdigit() else record.job_id,
        "status": record.state,
        "depends_on": [],
        "command": [],
        "resources": {},
    }


@router.get("/{job_id}", responses=_JOB_ERRORS)
async def get_job(host: HostDep, job_id: JobId, transport: ClusterDep) -> dict[str, Any]:
    """Detailed status: the list form plus raw state, exit code, times, log paths and transitions."""
    view = await jobs.status(host, transport, job_id)
    return await _detail(host, transport, view)


async def _detail(host: Host, transport: str, view: jobs.JobView) -> dict[str, Any]:
    from svc_host.store.jobs import transitions

    job, record = view.status, view.record
    if record is not None and job.gpus and not job.gpu_types:
        job = await _with_gpu_types(host, transport, job)
    upstream = await host.store.run(run_repo.upstream_names, record.transport, [job.job_id]) if record else {}
    body = list_form(job, json.loads(record.command) if record else None, upstream.get(job.job_id))
    body.update(
        {
            "raw_state": job.raw_state,
            "exit_code": job.exit_code,
            "signal": job.signal,
            "reason": job.reason,
            "node_list": job.node_list,
            "time_limit": job.time_limit,
            "cancelled_by": await jobs.cancelled_by(host, transport, job.raw_state),
            "stdout_path": job.stdout_path,
            "stderr_path": job.stderr_path,
            "transport": transport,
            "source": record.source if record else None,
            "submitted_at": record.submitted_at.isoformat() if record else None,
            # svc's record, else the scheduler's (accounting's Start and End of a job svc did not submit)
            "started_at": _moment(record.started_at if record else job.started_at),
            "ended_at": _moment(record.ended_at if record else job.ended_at),
            "transitions": [],
        }
    )
    if record is not None and record.id is not None:
        rows = await host.store.run(transitions, record.id)
        body["transitions"] = [
            {"from": r.from_state, "to": r.to_state, "raw_state": r.raw_state, "at": r.at.isoformat()} for r in rows
        ]
    if record is not None:
        body["resources"] = json.loads(record.resources)
    return body


async def _with_gpu_types(host: Host, transport: str, job: JobStatus) -> JobStatus:
    """A stored job with its GPUs' types, which svc's store does not keep: the scheduler's (squeue while it
    runs, then accounting); unchanged when the scheduler cannot tell (the count still stands)."""
    try:
        seen = (await host.transport(transport).statuses([job.job_id])).get(job.job_id)
    except SvcError:
        return job
    return job.model_copy(update={"gpu_types": seen.gpu_types}) if seen is not None else job


def _moment(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


@router.delete("/{job_id}", status_code=204, responses=_JOB_ERRORS)
async def cancel_job(host: HostDep, job_id: JobIds, transport: ClusterDep) -> Response:
    """Cancel a pending or running job, or the live tasks of an array's range (``123_[1-3]``): 204; unknown 404;
    already finished (every task of the range) 422."""
    if arrays.is_range(job_id):
        await jobs.cancel_tasks(host, transport, job_id)
    else:
        await jobs.cancel(host, transport, job_id)
    return Response(status_code=204)


@router.get("/{job_id}/logs", responses=_JOB_ERRORS)
async def job_logs(
    host: HostDep,
    job_id: JobId,
    transport: ClusterDep,
    stdout_offset: int = Query(0, ge=0, le=MAX_OFFSET, description="Byte offset to read stdout from."),
    stderr_offset: int = Query(0, ge=0, le=MAX_OFFSET, description="Byte offset to read stderr from."),
    limit: int = Query(LOG_CHUNK_LIMIT, ge=1, le=LOG_CHUNK_LIMIT, description="Bytes per log at most."),
    tail_lines: int | None = Query(
        None,
        ge=1,
        le=MAX_TAIL_LINES,
        description="The last lines of each log instead (taken from its last `limit` bytes); no offsets with it.",
    ),
) -> dict[str, Any]:
    """stdout and stderr from byte offsets, with the offsets to continue from (for a live tail); with
    ``tail_lines``, the end of each log (the offsets returned are where the logs end)."""
    if tail_lines is not None and (stdout_offset or stderr_offset):
        raise InvalidRequestError("give tail_lines or offsets, not both")
    found = await jobs.logs(
        host,
        transport,
        job_id,
        stdout_offset=stdout_offset,
        stderr_offset=stderr_offset,
        limit=limit,
        tail=tail_lines is not None,
    )
    out, err = found.stdout, found.stderr
    if tail_lines is not None:
        out, err = (jobs.last_lines(chunk, tail_lines) if chunk else None for chunk in (out, err))
    return {
        "stdout": out.content if out else "",
        "stderr": err.content if err else "",
        "stdout_offset": out.next_offset if out else stdout_offset,
        "stderr_offset": err.next_offset if err else stderr_offset,
        "stdout_path": out.path if out else None,
        "stderr_path": err.path if err else None,
    }
