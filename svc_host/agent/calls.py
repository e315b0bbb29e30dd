"""The work behind ``svc jobs|status|submit|logs`` and ``svc session start``, as calls on a ``Host``: JSON in, JSON out.

A command runs these in its own process, or has the svc agent run them (``svc_host.agent``) on the Host it
keeps warm. Both print what the call returned with the same code, so their output cannot differ. Expected
failures are raised as ``SvcError`` or click errors, which the agent sends back for the CLI to raise again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from svc_host.domain.jobs import JobStatus
    from svc_host.host import Host


def job_dict(job: JobStatus) -> dict[str, Any]:
    """A job as ``--json`` prints it (and as the table is made from)."""
    return job.model_dump(mode="json", exclude_none=True)


async def warm(host: Host, transport: str) -> None:
    """Before work that reads the store and always talks to ``transport`` (submit, logs): open the store (import
    the ORM, check migrations) in a worker thread while the transport connects, so a new process's SSH handshake
    overlaps the import; on a warm Host both are already done. ``status`` may not need the connection (a job
    that ended) and ``queue`` never reads the store: they leave the other alone."""
    import asyncio

    target = host.transport(transport)  # an unknown name fails here, before anything is opened
    await asyncio.gather(asyncio.to_thread(lambda: host.store), target.connect())


async def queue(host: Host, cwd: Path, *, transport: str, user: str | None) -> list[dict[str, Any]]:
    """``svc jobs``: the scheduler's queue."""
    return [job_dict(job) for job in await host.transport(transport).queue(user=user)]


async def status(host: Host, cwd: Path, *, transport: str, job_ids: list[str]) -> dict[str, dict[str, Any]]:
    """``svc status``: each known job by id (tracked jobs from the store after one refresh); unknown ids are
    left out."""
    from svc_host.errors import NotFoundError
    from svc_host.services import jobs as job_service

    host.transport(transport)  # an unknown transport is an error, not a set of unknown jobs
    found = {}
    for job_id in job_ids:
        try:
            found[job_id] = job_dict((await job_service.status(host, transport, job_id)).status)
        except NotFoundError:
            continue
    return found


async def submit(
    host: Host,
    cwd: Path,
    *,
    transport: str,
    fields: dict[str, Any],
    command: list[str] | None,
    script: str | None,
    env: dict[str, str],
    mount: str | None,
    test_only: bool,
) -> dict[str, Any]:
    """``svc submit``: validate the job (a usage error names the bad field), render it with the job defaults
    seen from ``cwd`` (its project config), submit and record it; with ``test_only``, submit nothing and answer
    whether Slurm would start it now, and where (``pending.fit_answer``)."""
    from dataclasses import replace

    from pydantic import ValidationError

    from svc_host.domain.submission import Environment, JobDefinition, Resources
    from svc_host.services import jobs as job_service
    from svc_host.settings.config import load_config

    try:
        definition = JobDefinition(
            name=fields.get("name"),
            command=command,
            script=script,
            resources=Resources(**{k: v for k, v in fields.items() if k in Resources.model_fields}),
            environment=Environment(
                conda=fields.get("conda"), venv=fields.get("venv"), container=fields.get("container"), env_vars=env
            ),
            log_dir=fields.get("log_dir"),
            work_dir=fields.get("work_dir"),
            renderer=fields.get("renderer"),
        )
    except ValidationError as exc:
        from svc_host.domain.validation_words import describe_validation

        raise click.UsageError(describe_validation(exc.errors())) from None
    await warm(host, transport)
    if mount is not None:
        from svc_host.settings.mounts import cluster_paths

        where = cluster_paths(
            host.transports.config.profiles,
            host.transports.spec(transport),
            mount,
            work_dir=definition.work_dir,
            log_dir=definition.log_dir,
        )
        definition = definition.model_copy(update={"work_dir": where.work_dir, "log_dir": where.job_log_dir})
    config = load_config(replace(host.paths, project_dir=cwd), env=os.environ if host.read_env else None)
    if test_only:
        from svc_host.services import pending

        return await pending.fit_answer(host, definition, transport=transport, config=config)
    record = await job_service.submit(host, definition, transport=transport, source="cli", config=config)
    return {"job_id": record.job_id, "name": record.name, "stdout": record.stdout_path, "stderr": record.stderr_path}


async def log_step(
    host: Host, cwd: Path, *, transport: str, job_id: str, which: str, offset: int, follow: bool
) -> dict[str, Any]:
    """``svc logs``: the next piece of one log from ``offset``. ``done`` ends the command; otherwise it asks
    again from ``next_offset``, after a second when ``wait`` (following a job that is still running)."""
    from svc_host.services import jobs as job_service

    await warm(host, transport)
    found = await job_service.logs(host, transport, job_id, stdout_offset=offset, stderr_offset=offset)
    chunk = found.stdout if which == "stdout" else found.stderr
    if chunk is None:
        raise click.ClickException(f"no {which} log is known for job {job_id}")
    step = {"content": chunk.content, "next_offset": chunk.next_offset, "done": False, "wait": False}
    if chunk.size is not None and chunk.next_offset < chunk.size:
        return step
    if not follow:
        return {**step, "done": True}
    current = await job_service.status(host, transport, job_id)
    if current.status.state.is_terminal:
        rest = await host.transport(transport).read_log(chunk.path, offset=chunk.next_offset)
        return {**step, "content": chunk.content + rest.content, "next_offset": rest.next_offset, "done": True}
    return {**step, "wait": True}


async def session_start(
    host: Host,
    cwd: Path,
    *,
    transport: str,
    kind: str,
    fields: dict[str, str],
    gpus: str | None,
    time_limit: str | None,
    partition: str | None,
) -> dict[str, Any]:
    """``svc session start``: check the request (a usage error in words), start the session, answer its view."""
    from pydantic import ValidationError

    from svc_host.domain.validation_words import describe_validation
    from svc_host.sessions import manage
    from svc_host.sessions.request import SessionRequest

    try:
        request = SessionRequest(kind=kind, fields=fields, gpus=gpus, time_limit=time_limit, partition=partition)
    except ValidationError as exc:
        raise click.UsageError(describe_validation(exc.errors())) from None
    return manage.views(host, [await manage.start(host, request, transport=transport, source="cli")])[0]


CALLS: dict[str, Callable[..., Coroutine[Any, Any, Any]]] = {
    "queue": queue,
    "status": status,
    "submit": submit,
    "log_step": log_step,
    "session_start": session_start,
}
"""By the names of ``svc_host.agent.protocol.JOB_CALLS`` and ``session_start``."""
