"""From a run request to the rows of a run: load, select, and turn every job into a ``JobDefinition``.

Defaults come from the merged configuration (``host.config()``): a job's ``resources`` override single
fields, ``environment.env_vars`` are merged per variable, ``log_dir``/``work_dir`` replace the configured
ones. Then the paths are placed:

* with an SSH ``transport`` and a mount (``mount``, else the workflow's ``default_project``), ``work_dir``
  and ``log_dir`` are translated onto the cluster by :func:`svc_host.settings.mounts.cluster_paths`, and both
  mounts are synced before submitting;
* on the local scheduler, a missing or relative ``work_dir`` is made absolute against the working
  directory now, so a retry after a restart runs in the same place.

A shell job's ``script_path`` (relative paths are relative to the workflow file) must resolve, symlinks
and all, inside the workflow file's own directory or the local directory of one of the profiles' mounts;
its text becomes the batch script, so its own ``#SBATCH`` lines win over the job's resources.

Over SSH without a mount, a job without a ``work_dir`` (its own or the configured one) runs where sbatch
would run it, in the cluster's login directory: :func:`with_login_dir` asks the transport for it (once per
connection) before ``prepare``, and ``log_dir`` is placed under it as under any ``work_dir``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import Environment, JobDefinition, Resources
from svc_host.errors import NotFoundError, PluginError, WorkflowError
from svc_host.plugin_core.settings import renderer_for
from svc_host.settings.mounts import LOCAL, PathForbiddenError, cluster_paths, find_mount, mount_profile
from svc_host.transports.base import SlurmTransport
from svc_host.workflows.dag import SelectedJob, select
from svc_host.workflows.files import confine, read_text
from svc_host.workflows.load import load_workflow
from svc_host.workflows.model import Workflow, WorkflowJob
from svc_host.workflows.store import NewJob, NewRun

if TYPE_CHECKING:
    from svc_host.plugin_core.records import TransportSpec
    from svc_host.runtime.ports import Ports
    from svc_host.settings.config import SvcConfig
    from svc_host.store.tables import WorkflowRunRecord


@dataclass(frozen=True)
class RunRequest:
    """What a caller asks to run. ``yaml_path`` is already resolved and allowed by the interface."""

    yaml_path: Path
    args: Mapping[str, Any] | None = None
    from_job: str | None = None
    to_job: str | None = None
    single_job: str | None = None
    transport: str = LOCAL
    mount: str | None = None
    text: str | None = None
    """The file's text when the caller has read it already."""
    login_dir: str | None = None
    """The cluster's login directory (absolute): the ``work_dir`` of jobs that run over SSH without one and
    without a mount. Filled by :func:`with_login_dir`."""


@dataclass(frozen=True)
class PreparedRun:
    """A validated request: the workflow, the chosen jobs in order and the run to create."""

    workflow: Workflow
    selected: list[SelectedJob]
    new_run: NewRun

    def preview(self) -> list[dict[str, Any]]:
        """``jobs_to_execute`` of a dry run: name, kept dependencies and command, in submission order."""
        rows = []
        for chosen in self.selected:
            row: dict[str, Any] = {"name": chosen.job.name, "depends_on": chosen.depends_on}
            row["command"] = chosen.job.command
            if chosen.job.script_path is not None:
                row["script_path"] = chosen.job.script_path
            rows.append(row)
        return rows


async def with_login_dir(host: Ports, request: RunRequest) -> RunRequest:
    """``request`` with the login directory of its SSH transport, when jobs may run there (no ``mount``).

    Raises:
        TransportError: the cluster could not be asked.
    """
    if request.mount is not None or request.login_dir is not None:
        return request
    try:
        remote = host.transports.spec(request.transport or LOCAL).remote
    except PluginError:
        return request  # ``prepare`` reports an unknown transport, after the workflow's own errors
    if not remote:
        return request
    transport = host.transport(request.transport)
    if not isinstance(transport, SlurmTransport):
        return request
    return dataclasses.replace(request, login_dir=await transport.login_dir())


def prepare(host: Ports, request: RunRequest) -> PreparedRun:
    """Load, validate and place a run (blocking file reads: call it through ``asyncio.to_thread``).

    Raises:
        WorkflowError: the workflow or the selection is invalid.
        InvalidRequestError, NotFoundError: ``mount`` without an SSH transport, or an unknown mount.
        PluginError: an unknown transport.
    """
    text = request.text if request.text is not None else read_text(request.yaml_path)
    workflow = load_workflow(text, args=request.args)
    selected = select(workflow, from_job=request.from_job, to_job=request.to_job, single_job=request.single_job)
    transport = request.transport or LOCAL
    host.transport(transport)  # an unknown transport is reported before anything else happens
    spec = host.transports.spec(transport)
    profiles = host.transports.config.profiles
    root = request.mount
    if request.mount is not None:
        if not spec.mounts:
            cluster_paths(profiles, spec, request.mount, work_dir=None, log_dir=".")  # the spec's message
        find_mount(profiles, mount_profile(spec), request.mount)
    sync_mounts: list[str] = []
    if spec.mounts:
        if workflow.default_project is not None:
            find_mount(profiles, mount_profile(spec), workflow.default_project)
            root = root or workflow.default_project
        sync_mounts = list(dict.fromkeys(name for name in (request.mount, workflow.default_project) if name))
    config = host.config()
    base = request.yaml_path.parent
    roots = script_roots(base, profiles)
    jobs = [
        NewJob(
            name=chosen.job.name,
            dependencies=chosen.dependencies,
            definition=_definition(
                host, chosen.job, config, spec, root, roots, base, request.login_dir, workflow.renderer
            ),
            retry=chosen.job.retry,
            retry_delay=chosen.job.retry_delay,
            on_interruption=chosen.job.on_interruption,
            escalate=chosen.job.escalate,
        )
        for chosen in selected
    ]
    for job in jobs:  # an unknown renderer is refused before anything is submitted
        renderer_for(host.plugins, job.definition, config)
    selection = {"from_job": request.from_job, "to_job": request.to_job, "single_job": request.single_job}
    new_run = NewRun(
        workflow_name=workflow.name,
        yaml_path=str(request.yaml_path),
        args=workflow.args,
        selection={key: value for key, value in selection.items() if value is not None},
        transport=transport,
        mount=request.mount,
        sync_mounts=sync_mounts,
        jobs=jobs,
    )
    return PreparedRun(workflow=workflow, selected=selected, new_run=new_run)


def env_values(host: Ports, run: WorkflowRunRecord, job_name: str) -> dict[str, str]:
    """The environment variables of one job of a run, values included, from where they live: the run's workflow
    file (rendered with the run's args) over the configured ones, read now. The store keeps only their names
    (``store.stored_definition``), so the values are read again for every submission (blocking file reads).

    Raises:
        WorkflowError: the workflow file is gone or no longer valid, or no longer has the job.
    """
    path = Path(run.yaml_path)
    try:
        text = read_text(path)
    except NotFoundError:
        raise WorkflowError(
            [f"job {job_name!r}: its environment variables are read from {path.name}, which no longer exists"]
        ) from None
    workflow = load_workflow(text, args=json.loads(run.args))
    job = next((job for job in workflow.jobs if job.name == job_name), None)
    if job is None:
        raise WorkflowError([f"job {job_name!r}: {path.name} no longer has this job to read its environment from"])
    return {**host.config().environment.env_vars, **job.environment.env_vars}


def script_roots(base: Path, profiles: Mapping[str, SSHProfile]) -> list[Path]:
    """Where shell jobs' scripts may be: the workflow file's directory and the mounts' local directories."""
    roots = [base, *(Path(mount.local).expanduser() for profile in profiles.values() for mount in profile.mounts)]
    return list(dict.fromkeys(root.resolve() for root in roots))


def _definition(
    host: Ports,
    job: WorkflowJob,
    config: SvcConfig,
    transport: TransportSpec,
    mount: str | None,
    roots: list[Path],
    base: Path,
    login_dir: str | None,
    renderer: str | None,
) -> JobDefinition:
    resources = Resources.model_validate(
        {**config.resources.model_dump(), **job.resources.model_dump(include=job.resources.model_fields_set)}
    )
    given = job.environment.model_dump(include=job.environment.model_fields_set)
    environment = Environment.model_validate(
        {
            **config.environment.model_dump(),
            **given,
            "env_vars": {**config.environment.env_vars, **job.environment.env_vars},
        }
    )
    work_dir = job.work_dir if job.work_dir is not None else config.work_dir
    log_dir = job.log_dir if job.log_dir is not None else config.log_dir
    if mount is not None and transport.mounts:
        placed = cluster_paths(host.transports.config.profiles, transport, mount, work_dir=work_dir, log_dir=log_dir)
        work_dir, log_dir = placed.work_dir, placed.job_log_dir
    elif not transport.remote:
        work_dir = os.path.abspath(os.path.expanduser(work_dir or os.getcwd()))
    elif work_dir is None:
        if login_dir is None:
            raise WorkflowError(
                [f"job {job.name!r}: work_dir is required with transport={transport.name!r}: give a directory on "
                 "the cluster, or a mount (mount, or the workflow's default_project)"]
            )  # fmt: skip
        work_dir = login_dir
    script = None
    if job.script_path is not None:
        try:
            path = confine(job.script_path, roots, what="Script path", base=base)
        except PathForbiddenError as exc:
            raise WorkflowError([str(exc)]) from None
        script = read_text(path, shown=job.script_path)
    try:
        return JobDefinition(
            name=job.name,
            command=job.command,
            script=script,
            resources=resources,
            environment=environment,
            work_dir=work_dir,
            log_dir=log_dir,
            renderer=job.renderer or renderer,
        )
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise WorkflowError([f"job {job.name!r}: {exc}"]) from None
