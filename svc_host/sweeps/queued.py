"""Launched cells that do not run yet: their job waits in the queue (an array's tasks past its ``%`` limit, a
held job, a busy cluster). ``cells_running`` counts them with the running ones (their run is ``running``); the
views subtract them and say why Slurm keeps them, as ``2 running · 4 queued (array limit)``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from sqlmodel import Session, col, func, select

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.store.tables import WorkflowRunRecord
from svc_host.sweeps.cell_counts import in_queue

REASONS = {
    "JobArrayTaskLimit": "array limit",
    "JobHeldUser": "held",
    "JobHeldAdmin": "held by an administrator",
    "Resources": "waiting for resources",
    "Priority": "waiting for priority",
    "Dependency": "waiting on a dependency",
    "QOSMaxJobsPerUserLimit": "QOS job limit",
    "AssocMaxJobsLimit": "association job limit",
}
"""Slurm's pending reasons in a few words (any other reason is shown as Slurm writes it)."""
NO_REASON = frozenset({"", "None"})
"""What squeue writes for a pending job it has not judged yet (after a release): not a reason."""


def queued_cells(session: Session, sweep_ids: Collection[int]) -> dict[int, int]:
    """How many launched cells of each sweep wait in the queue; sweeps with none are absent."""
    if not sweep_ids:
        return {}
    query = in_queue(select(WorkflowRunRecord.sweep_id, func.count(func.distinct(WorkflowRunRecord.id))), sweep_ids)
    rows = session.exec(query.group_by(col(WorkflowRunRecord.sweep_id)))
    return {int(sweep_id): int(count) for sweep_id, count in rows if sweep_id is not None}


def queue_reason(queue: Sequence[JobStatus], array_job_id: str) -> str | None:
    """Why the queue keeps the pending tasks of the array ``array_job_id``, in words (the most frequent reason).

    Right after ``scontrol release`` (a sweep resumed) Slurm writes the reason ``None`` until its scheduler looks
    at the tasks again: that is no reason, so a task saying it counts for none (the next read names it)."""
    reasons = Counter(
        job.reason
        for job in queue
        if job.state is JobState.PENDING
        and job.reason is not None
        and job.reason not in NO_REASON
        and job.job_id.startswith(f"{array_job_id}_")
    )
    if not reasons:
        return None
    reason = reasons.most_common(1)[0][0]
    return REASONS.get(reason, reason)
