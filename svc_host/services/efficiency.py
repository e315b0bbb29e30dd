"""Efficiency as REST, MCP and the CLI show it: one job, a workflow run, a sweep (reads the store only; the
monitor stored each ended job's usage when it ended, so no view asks the scheduler)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_host.domain.efficiency import Totals, job_efficiency
from svc_host.domain.jobs import JobState
from svc_host.errors import NotFoundError
from svc_host.store.stored_usage import usage_of

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports
    from svc_host.store.tables import JobRecord

NOT_MEASURED = {
    "live": "the job has not ended yet",
    "unmeasured": "accounting has no usage for this job (not read yet, or the cluster keeps no accounting)",
}


def efficiency_of(record: JobRecord) -> dict[str, Any] | None:
    """A job's efficiency, or ``None`` while it runs or when accounting gave no usage."""
    usage = usage_of(record)
    return job_efficiency(usage, state=record.state) if usage is not None else None


def job_view(record: JobRecord) -> dict[str, Any]:
    """One job with its efficiency and, when there is none, why not."""
    efficiency = efficiency_of(record)
    reason = None
    if efficiency is None:
        reason = NOT_MEASURED["unmeasured" if JobState(record.state).is_terminal else "live"]
    return {
        "job_id": record.job_id,
        "name": record.name,
        "transport": record.transport,
        "status": record.state,
        "efficiency": efficiency,
        "not_measured_reason": reason,
    }


def summary(records: list[JobRecord]) -> dict[str, Any]:
    """Aggregate efficiency over the ended jobs among ``records``."""
    totals = Totals()
    ended = 0
    for record in records:
        if JobState(record.state).is_terminal:
            ended += 1
            usage = usage_of(record)
            if usage is not None:
                totals.add(Totals.of(usage, state=record.state))
    return totals.summary(ended)


async def for_job(host: Ports, transport: str, job_id: str) -> dict[str, Any]:
    from svc_host.store import jobs as job_repo

    record = await host.store.run(job_repo.find_job, transport, job_id)
    if record is None:
        raise NotFoundError(f"job {job_id} on {transport!r} was not submitted through svc: it has no stored usage")
    return job_view(record)


async def for_run(host: Ports, run_id: str) -> dict[str, Any]:
    from svc_host.store import usage

    found = await host.store.run(usage.run_jobs, run_id)
    if found is None:
        raise NotFoundError(f"workflow run {run_id!r} not found")
    return {
        "run_id": run_id,
        "summary": summary([record for _, record in found]),
        "jobs": [{"workflow_job": name, **job_view(record)} for name, record in found],
    }


async def for_sweep(host: Ports, sweep_id: int) -> dict[str, Any]:
    from svc_host.store import usage

    found = await host.store.run(usage.sweep_jobs, sweep_id)
    if found is None:
        raise NotFoundError(f"sweep {sweep_id} not found")
    return {
        "sweep_id": sweep_id,
        "summary": summary([record for _, _, record in found]),
        "jobs": [{"run_id": run_id, "workflow_job": name, **job_view(record)} for run_id, name, record in found],
    }
