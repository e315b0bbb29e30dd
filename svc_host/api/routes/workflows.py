"""``/api/workflows``: workflow files (list, get, validate, upload, create, delete), runs and cancel.

Files live in one directory (``svc_host.workflows.files.workflows_dir``); requests name workflows, never
paths. Status codes beyond the spec's: upload answers 422 for a bad filename or an invalid workflow (413
over 1 MB) and 200 ``{status: 'uploaded', ...}`` on success, replacing a file of the same name; a run
takes an optional JSON body (``args``, ``from_job``, ``to_job``, ``single_job``, ``transport``, ``mount``);
with a ``sweep`` object (``{matrix, fail_fast, max_parallel, max_failures}``) the run is a sweep and the answer
is 202 with the Sweep run (its cells are launched in the background; see ``/api/sweep_runs``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from svc_host.api.cluster import named_cluster
from svc_host.api.deps import HostDep, SharedReadsDep
from svc_host.api.encoding import encode_json, json_body
from svc_host.api.params import MAX_OFFSET, MAX_ROW_ID, error_responses
from svc_host.errors import InvalidRequestError, NotFoundError, SvcError, WorkflowError
from svc_host.host import Host
from svc_host.sweeps.cells import SweepRequest
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.views import sweep_view
from svc_host.workflows import views
from svc_host.workflows.files import WorkflowDirectory, check_filename, check_name, check_size, workflows_dir
from svc_host.workflows.load import check_document, check_workflow
from svc_host.workflows.prepare import RunRequest
from svc_host.workflows.source import YamlSyntaxError, dump, parse
from svc_host.workflows.summaries import summary

router = APIRouter(prefix="/api/workflows", tags=["workflows"])
log = logging.getLogger(__name__)


def _directory(host: Host) -> WorkflowDirectory:
    return WorkflowDirectory(workflows_dir(host.paths))


class ValidateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    yaml: str


class UploadBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    yaml: str
    filename: str


class CreateBody(BaseModel):
    """The spec's ``name`` and ``jobs``, plus the file's optional ``args`` and ``default_project``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    jobs: list[dict[str, Any]]
    args: dict[str, Any] | None = None
    default_project: str | None = None


class RunBody(BaseModel):
    """Optional: what to run of the workflow, with which arguments, where (default: the server's transport)."""

    model_config = ConfigDict(extra="forbid")

    args: dict[str, Any] | None = None
    from_job: str | None = None
    to_job: str | None = None
    single_job: str | None = None
    transport: str | None = None
    mount: str | None = None
    sweep: dict[str, Any] | None = None
    """Run as a sweep: ``{matrix: {axis: [values]}, fail_fast: false, max_parallel: 4, max_failures: null}``
    (``max_failures`` N: stop and cancel the rest once more than N cells failed; not with ``fail_fast``)."""


@router.get("", response_model=list[dict[str, Any]])
async def list_workflows(host: HostDep, reads: SharedReadsDep) -> Response:
    """Every workflow file: ``{name, workflow_name, job_count, job_names, valid, errors?}`` by name.

    A file that cannot be read or loaded (too large, unreadable, a YAML bomb, a template past its limits) is
    listed with ``valid: false`` and its problem in ``errors``; it never fails the listing, not even when
    checking it fails in a way svc did not foresee (that is logged, and the entry says so)."""

    def scan() -> list[dict[str, Any]]:
        directory = _directory(host)
        found = []
        for name in directory.names():
            try:
                text = directory.read(name)
            except NotFoundError:
                continue  # deleted meanwhile
            except (SvcError, OSError) as exc:
                problem = str(exc) if isinstance(exc, SvcError) else f"cannot read the file: {exc.strerror}"
                found.append(_broken(name, problem))
                continue
            try:
                found.append(summary(name, text))
            except Exception:  # one file's unforeseen failure must not hide every other workflow
                log.exception("checking workflow file %r failed", name)
                found.append(_broken(name, "the file could not be checked: an internal error (logged by the server)"))
        return found

    async def read() -> bytes:
        return encode_json(await asyncio.to_thread(scan))

    return json_body(await reads.run(("GET /api/workflows",), read))


def _broken(name: str, problem: str) -> dict[str, Any]:
    """The listing's entry of a file that could not be read or checked."""
    return {"name": name, "workflow_name": None, "job_count": 0, "job_names": [], "valid": False, "errors": [problem]}


@router.post("/validate", responses=error_responses(422))
async def validate(body: ValidateBody) -> dict[str, Any]:
    """``{valid: true}`` or ``{valid: false, errors}`` (every problem, with its line)."""
    _, problems = await asyncio.to_thread(check_workflow, body.yaml)
    return {"valid": False, "errors": problems} if problems else {"valid": True}


@router.post("/upload", responses=error_responses(413, 422, e413="the workflow is over 1 MB"))
async def upload(body: UploadBody, host: HostDep) -> dict[str, Any]:
    """Save a workflow file (replacing one of the same name): 413 over 1 MB, 422 bad filename or workflow."""
    name = check_filename(body.filename)
    check_size(body.yaml)
    workflow, problems = await asyncio.to_thread(check_workflow, body.yaml)
    if problems or workflow is None:
        raise WorkflowError(problems)
    extension = "." + body.filename.rpartition(".")[2]
    await asyncio.to_thread(_directory(host).write, name, body.yaml, extension=extension, overwrite=True)
    return {
        "status": "uploaded",
        "name": name,
        "filename": f"{name}{extension}",
        "workflow_name": workflow.name,
        "job_count": len(workflow.jobs),
        "job_names": [job.name for job in workflow.jobs],
    }


@router.post("/create", responses=error_responses(409, 413, 422, e413="the workflow is over 1 MB"))
async def create(body: CreateBody, host: HostDep) -> dict[str, Any]:
    """Write ``<name>.yaml`` from structured jobs: 200 Workflow; 409 exists; 422 invalid."""
    check_name(body.name)
    document: dict[str, Any] = {"name": body.name}
    if body.args:
        document["args"] = body.args
    if body.default_project is not None:
        document["default_project"] = body.default_project
    document["jobs"] = body.jobs
    workflow, problems = await asyncio.to_thread(check_document, document)
    if problems or workflow is None:
        raise WorkflowError(problems)
    text = await asyncio.to_thread(dump, document)
    await asyncio.to_thread(_directory(host).write, body.name, text, overwrite=False)
    return views.created(workflow)


@router.get("/runs")
async def list_runs(
    host: HostDep,
    limit: int = Query(100, ge=1, le=500, description="At most this many runs, newest first."),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
    status: str | None = Query(None, max_length=100, description="Only runs in this status."),
    workflow: str | None = Query(None, max_length=1000, description="Only runs of this workflow name."),
    sweep_id: int | None = Query(None, ge=1, le=MAX_ROW_ID, description="Only the cells of this sweep."),
) -> list[dict[str, Any]]:
    """Workflow runs, newest first (job statuses as last stored by the monitor)."""
    engine = await host.workflow_engine()
    found = await engine.runs(limit=limit, offset=offset, status=status, workflow_name=workflow, sweep_id=sweep_id)
    return [views.run_view(snap, host.submit_throttle.reason(snap.run.id)) for snap in found]


@router.get("/runs/{run_id}", responses=error_responses(404, 502, 503))
async def get_run(run_id: str, host: HostDep) -> dict[str, Any]:
    """One run with live job statuses (refreshed by one batched scheduler query when jobs are live) and every
    attempt of its jobs (``attempts``)."""
    engine = await host.workflow_engine()
    snap = await engine.get(run_id, refresh=True)
    return views.run_detail(snap, await engine.attempts(run_id), host.submit_throttle.reason(run_id))


@router.post("/runs/{run_id}/cancel", responses=error_responses(404, 422))
async def cancel_run(run_id: str, host: HostDep) -> dict[str, Any]:
    """Cancel a run: 200 ``{status: 'cancelled', run_id, warnings?}``; 404; 422 already terminal."""
    engine = await host.workflow_engine()
    warnings = await engine.cancel(run_id)
    body: dict[str, Any] = {"status": "cancelled", "run_id": run_id}
    if warnings:
        body["warnings"] = warnings
    return body


@router.get("/{name}", responses=error_responses(403, 404, 413, 422, e413="the workflow file is over 1 MB"))
async def get_workflow(name: str, host: HostDep) -> dict[str, Any]:
    """A workflow with its jobs (as ``get_workflow``), ``raw_yaml``, and ``valid``/``errors``."""
    text = await asyncio.to_thread(_directory(host).read, name)
    workflow, problems = await asyncio.to_thread(check_workflow, text)
    if workflow is not None:
        body = views.detail(workflow, text)
    else:
        declared = await asyncio.to_thread(_raw_name, text)
        body = {"name": declared, "args": {}, "default_project": None, "jobs": [], "raw_yaml": text}
    body["filename"] = name
    body["valid"] = not problems
    if problems:
        body["errors"] = problems
    return body


def _raw_name(text: str) -> str | None:
    try:
        data = parse(text).data
    except YamlSyntaxError:
        return None
    return str(data["name"]) if isinstance(data, dict) and "name" in data else None


@router.delete("/{name}", responses=error_responses(404, 422))
async def delete_workflow(name: str, host: HostDep) -> dict[str, Any]:
    """Delete a workflow file: 200 ``{status: 'deleted', name}``; 404; 422 invalid name."""
    await asyncio.to_thread(_directory(host).delete, name)
    return {"status": "deleted", "name": name}


@router.post(
    "/{name}/run",
    status_code=202,
    responses=error_responses(403, 404, 413, 422, 500, 502, 503, e413="the workflow file is over 1 MB"),
)
async def run_workflow(name: str, host: HostDep, body: RunBody | None = None) -> JSONResponse:
    """Run a workflow: sync, render, submit; 202 Workflow run (``running``). 404, 422, 500 render, 502.

    With ``sweep``: 202 Sweep run (``pending``, written with every cell); 422 for an invalid sweep spec
    (more than 1,000 cells included) or a cell that does not validate, 502 when a mount cannot be synced.
    """
    options = body or RunBody()
    directory = _directory(host)
    path = await asyncio.to_thread(directory.path, name)
    if path is None:
        raise NotFoundError(f"workflow {name!r} not found")
    request = RunRequest(
        yaml_path=path,
        args=options.args,
        from_job=options.from_job,
        to_job=options.to_job,
        single_job=options.single_job,
        transport=named_cluster(host, options.transport),
        mount=options.mount,
    )
    if options.sweep is not None:
        return await _start_sweep(host, request, options.sweep)
    engine = await host.workflow_engine()
    snap = await engine.run(request, triggered_by="web")
    return JSONResponse(views.run_view(snap), status_code=202)


async def _start_sweep(host: Host, request: RunRequest, raw: dict[str, Any]) -> JSONResponse:
    try:
        spec = parse_sweep(raw)
    except InvalidRequestError as exc:  # a request body that does not validate: 422, like the rest of the body
        raise WorkflowError([str(exc)]) from None
    orchestrator = await host.sweep_orchestrator()
    sweep = await orchestrator.submit(SweepRequest(run=request, spec=spec, source="web"))
    return JSONResponse(sweep_view(sweep), status_code=202)
