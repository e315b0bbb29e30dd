"""The engine's decisions as one pure function: given a run's jobs as the store has them, what to do now.

Job statuses (``workflow_run_job.status``):

* ``WAITING``: not submitted yet. A job is submitted once every parent is either final, or submitted
  and on its last attempt; dependencies on parents still live are handed to Slurm (``--dependency``),
  the others are checked here. A job whose parent may still be retried waits here, so it never has to be
  cancelled and re-pointed when the parent is resubmitted, and an ``afternotok`` child never runs on a
  failure that a retry then repairs.
* ``SUBMITTING``: sbatch is in flight (the crash-safety marker, see ``engine``).
* ``PENDING``, ``RUNNING``, ``SUSPENDED``, ``UNKNOWN``: live, as the monitor last saw the current attempt.
* ``RETRYING``: an attempt failed and the job will be submitted again at ``next_retry_at``.
* final: a canonical terminal state (``COMPLETED``, ``FAILED``, ``CANCELLED``, ``TIMEOUT``, ...) or
  ``SKIPPED`` (never run: a dependency can never be satisfied, e.g. ``afterok`` on a failed job or
  ``afternotok`` on a completed one; a pending job in that case is cancelled in Slurm, where it would
  otherwise wait forever).

An attempt that ends in any failure state except ``CANCELLED`` is retried while ``retries_left``; a
cancelled job (by a user, or by svc) is never retried.

The run is ``completed`` when every job is ``COMPLETED`` or ``SKIPPED`` and none failed; it is ``failed``
once nothing is live any more and some job ended in a failure (or was cancelled outside the run's own
cancel) with no retry left. Independent branches run to their end before the run is called failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from svc_host.domain.jobs import JobState
from svc_host.workflows.model import Dependency

WAITING = "WAITING"
SUBMITTING = "SUBMITTING"
RETRYING = "RETRYING"
SKIPPED = "SKIPPED"
LIVE = frozenset({JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED, JobState.UNKNOWN})
FINAL = frozenset({SKIPPED} | {state.value for state in JobState if state.is_terminal})
COMPLETED = JobState.COMPLETED.value
CANCELLED = JobState.CANCELLED.value

RUN_PENDING, RUN_SYNCING, RUN_SUBMITTING, RUN_RUNNING = "pending", "syncing", "submitting", "running"
RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED = "completed", "failed", "cancelled"
RUN_TERMINAL = frozenset({RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED})
RUN_STATES = (RUN_PENDING, RUN_SYNCING, RUN_SUBMITTING, RUN_RUNNING, RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED)


def satisfied(kind: str, parent_status: str) -> bool:
    """Whether a final parent satisfies a dependency of type ``kind`` (Slurm's meaning of each type)."""
    if kind in ("after", "afterany"):
        return True
    ok = parent_status == COMPLETED
    return ok if kind == "afterok" else not ok


@dataclass(frozen=True)
class JobView:
    """One job of a run as the planner sees it (``record_state``: the monitor's state of the attempt)."""

    name: str
    dependencies: tuple[Dependency, ...]
    status: str
    record_state: str | None = None
    job_id: str | None = None
    retries_left: int = 0
    retry_delay: int = 60
    next_retry_at: datetime | None = None
    attempt: int = 0
    exit_code: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Update:
    """New values for a job row; ``None`` fields are left alone (``clear_retry`` empties next_retry_at)."""

    status: str
    retries_left: int | None = None
    next_retry_at: datetime | None = None
    error: str | None = None


@dataclass
class Plan:
    """What to do: row updates, submissions (in order), cancellations, and the run's new status."""

    updates: dict[str, Update] = field(default_factory=dict)
    submit: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    """``(job, [(dependency type, parent job), ...])``: the parents to hand to Slurm by their job ids."""
    cancel: list[str] = field(default_factory=list)
    run_status: str | None = None
    run_error: str | None = None
    wake_at: datetime | None = None


def plan(jobs: Sequence[JobView], now: datetime) -> Plan:
    """Decide for a running run; ``jobs`` in topological order (parents before children)."""
    result = Plan()
    status: dict[str, str] = {}
    retries: dict[str, int] = {}
    by_name = {job.name: job for job in jobs}
    for job in jobs:
        current, left = job.status, job.retries_left
        if current in LIVE and job.record_state is not None and job.record_state != current:
            current = job.record_state
            if current in FINAL and current not in (COMPLETED, CANCELLED) and left > 0:
                left -= 1
                due = now + timedelta(seconds=job.retry_delay)
                result.updates[job.name] = Update(RETRYING, retries_left=left, next_retry_at=due)
                current = RETRYING
            else:
                result.updates[job.name] = Update(current)
        if current == WAITING or (current == RETRYING and _due(job, result, now)):
            blocked, handed, never = _edges(job, status, retries, by_name)
            if never:
                result.updates[job.name] = Update(SKIPPED, error=never)
                current = SKIPPED
            elif not blocked:
                result.submit.append((job.name, handed))
                current = "SUBMIT"
        elif current == JobState.PENDING.value:
            _, _, never = _edges(job, status, retries, by_name)
            if never:
                result.cancel.append(job.name)
                result.updates[job.name] = Update(SKIPPED, error=never)
                current = SKIPPED
        status[job.name], retries[job.name] = current, left
    _conclude(result, jobs, status)
    return result


def _due(job: JobView, result: Plan, now: datetime) -> bool:
    update = result.updates.get(job.name)
    due = update.next_retry_at if update is not None and update.next_retry_at is not None else job.next_retry_at
    if due is None or due <= now:
        return True
    result.wake_at = due if result.wake_at is None else min(result.wake_at, due)
    return False


def _edges(
    job: JobView, status: dict[str, str], retries: dict[str, int], by_name: dict[str, JobView]
) -> tuple[bool, list[tuple[str, str]], str | None]:
    """``(blocked, handed to Slurm, reason it can never run)`` for a job's dependencies right now."""
    blocked = False
    handed: list[tuple[str, str]] = []
    for dependency in job.dependencies:
        parent = status.get(dependency.job, by_name[dependency.job].status)
        if parent in FINAL:
            if not satisfied(dependency.type, parent):
                return False, [], f"dependency {dependency} can never be satisfied: {dependency.job} ended {parent}"
        elif (parent in LIVE or parent == "SUBMIT") and retries.get(dependency.job, 0) == 0:
            handed.append((dependency.type, dependency.job))
        else:
            blocked = True
    return blocked, handed, None


def _conclude(result: Plan, jobs: Sequence[JobView], status: dict[str, str]) -> None:
    if not all(value in FINAL for value in status.values()):
        return
    failures = [job for job in jobs if status[job.name] not in (COMPLETED, SKIPPED)]
    if not failures:
        result.run_status = RUN_COMPLETED
        return
    result.run_status = RUN_FAILED
    described = []
    for job in failures:
        text = f"job {job.name!r} ended {status[job.name]}"
        if job.exit_code not in (None, 0):
            text += f" (exit code {job.exit_code})"
        if job.attempt > 1:
            text += f" after {job.attempt} attempts"
        if job.error:
            text += f": {job.error}"
        described.append(text)
    skipped = [job.name for job in jobs if status[job.name] == SKIPPED]
    result.run_error = "; ".join(described) + (f"; skipped: {', '.join(skipped)}" if skipped else "")
