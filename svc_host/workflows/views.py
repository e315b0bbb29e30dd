"""Workflows and runs in the shapes the specs give them (REST, MCP and the CLI's ``--json`` share these)."""

from __future__ import annotations

import json
from typing import Any

from svc_host.domain.submission import Environment, Resources
from svc_host.domain.times import iso_utc
from svc_host.workflows.model import Workflow, WorkflowJob
from svc_host.workflows.store import Attempt, RunSnapshot

_JOB_RESOURCES = ("nodes", "gpus_per_node", "partition", "time_limit")
_ATTEMPT_RESOURCES = ("nodes", "gpus_per_node", "cpus_per_task", "memory_per_node", "time_limit", "partition")


def run_view(snap: RunSnapshot, queued: str | None = None) -> dict[str, Any]:
    """The REST "Workflow run": ``job_ids`` (strings) of submitted jobs and every job's current status; ``queued``
    says why jobs wait to be submitted (``svc_host.runtime.throttle``), null when none does."""
    run = snap.run
    return {
        "id": run.id,
        "workflow_name": run.workflow_name,
        "started_at": iso_utc(run.started_at),
        "completed_at": iso_utc(run.completed_at),
        "status": run.status,
        "job_ids": {job.name: job.job_id for job in snap.jobs if job.job_id is not None},
        "job_statuses": {job.name: snap.job_status(job) for job in snap.jobs},
        "error": run.error,
        "triggered_by": run.triggered_by,
        "transport": run.transport,
        "mount": run.mount,
        "args": json.loads(run.args),
        "selection": json.loads(run.selection),
        "sweep_id": run.sweep_id,
        "queued": queued,
    }


def attempt_view(attempt: Attempt) -> dict[str, Any]:
    """One attempt: its scheduler job, how it ended (or stands), where, with what, and why another followed."""
    record = attempt.record
    asked = json.loads(record.resources)
    return {
        "job": attempt.job,
        "attempt": attempt.attempt,
        "job_id": record.job_id,
        "state": record.state,
        "exit_code": record.exit_code,
        "node": record.node_list,
        "resources": {field: asked.get(field) for field in _ATTEMPT_RESOURCES},
        "elapsed_seconds": record.elapsed_seconds,
        "submitted_at": iso_utc(record.submitted_at),
        "ended_at": iso_utc(record.ended_at),
        "reason": attempt.reason,
    }


def run_detail(snap: RunSnapshot, attempts: list[Attempt], queued: str | None = None) -> dict[str, Any]:
    """One run as its detail shows it: the "Workflow run" and every attempt of its jobs (``attempts``)."""
    return {**run_view(snap, queued), "attempts": [attempt_view(attempt) for attempt in attempts]}


def results(snap: RunSnapshot, attempts: list[Attempt]) -> dict[str, dict[str, Any]]:
    """MCP ``run_workflow``'s ``results``: job name -> ``{job_id, status, attempts}``."""
    shown: dict[str, dict[str, Any]] = {
        job.name: {"job_id": job.job_id, "status": snap.job_status(job), "attempts": []} for job in snap.jobs
    }
    for attempt in attempts:
        shown[attempt.job]["attempts"].append(attempt_view(attempt))
    return shown


def rest_job(job: WorkflowJob) -> dict[str, Any]:
    """A workflow job as the REST "Job" of a create response: not submitted, status ``UNKNOWN``."""
    given = job.resources.model_fields_set
    return {
        "name": job.name,
        "job_id": None,
        "status": "UNKNOWN",
        "depends_on": list(job.depends_on),
        "command": job.command_words,
        "resources": {field: getattr(job.resources, field) if field in given else None for field in _JOB_RESOURCES},
    }


def created(workflow: Workflow) -> dict[str, Any]:
    """The REST "Workflow (create response)"."""
    return {"name": workflow.name, "jobs": [rest_job(job) for job in workflow.jobs]}


def full_job(job: WorkflowJob) -> dict[str, Any]:
    """A job as ``get_workflow`` shows it: all eight resource fields, the environment, retries."""
    resources: Resources = job.resources
    environment: Environment = job.environment
    shown: dict[str, Any] = {
        "name": job.name,
        "depends_on": list(job.depends_on),
        "retry": job.retry,
        "retry_delay": job.retry_delay,
        "command": job.command,
        "resources": resources.model_dump(mode="json"),
        "environment": environment.model_dump(mode="json", include={"conda", "venv", "env_vars"}),
    }
    if job.script_path is not None:
        shown["script_path"] = job.script_path
    if environment.container is not None:
        shown["environment"]["container"] = environment.container
    for field in ("log_dir", "work_dir"):
        if getattr(job, field) is not None:
            shown[field] = getattr(job, field)
    for rules in ("on_interruption", "escalate"):  # retry rules the file declares
        if rules in job.model_fields_set:
            shown[rules] = getattr(job, rules).model_dump(mode="json", exclude_none=True)
    return shown


def detail(workflow: Workflow, raw_yaml: str) -> dict[str, Any]:
    """``get_workflow``'s return (without ``success``)."""
    return {
        "name": workflow.name,
        "args": workflow.args,
        "default_project": workflow.default_project,
        "jobs": [full_job(job) for job in workflow.jobs],
        "raw_yaml": raw_yaml,
    }


def brief_job(job: WorkflowJob) -> dict[str, Any]:
    """``{name, depends_on, command}`` (``validate_workflow``'s jobs)."""
    return {"name": job.name, "depends_on": list(job.depends_on), "command": job.command}
