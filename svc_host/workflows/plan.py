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

Whether an ended attempt is retried, and with what, is :func:`svc_host.workflows.retries.decide` (by the end
state: interruptions automatically, ``OUT_OF_MEMORY``/``TIMEOUT`` under an escalation rule, ``FAILED`` only
opted in; a cancelled job is never retried). The decision's reason is recorded on the attempt (``Update.note``).

A job's children wait in svc while it may still be retried for a failure of its own (``retry`` left, or an
``escalate`` rule), and so do its ``afterany``/``afternotok`` children while an interruption may still be
retried; an ``afterok`` or ``after`` child goes to Slurm, and if the parent is interrupted and retried, the
child, still pending on the old attempt, is cancelled and goes back to ``WAITING`` (recorded on its attempt)
to follow the new one.

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
from svc_host.workflows.retries import Ended, Retry, RetryPolicy, decide

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
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    interruptions_left: int = 0
    node: str | None = None
    """The node(s) the current attempt ran on."""
    memory: str | None = None
    """The current attempt's ``memory_per_node`` and ``time_limit`` (what an escalation grows)."""
    time_limit: str | None = None


@dataclass(frozen=True)
class Update:
    """New values for a job row; ``None`` fields are left alone (but ``next_retry_at``, always written)."""

    status: str
    retries_left: int | None = None
    next_retry_at: datetime | None = None
    error: str | None = None
    interruptions_left: int | None = None
    resources: dict[str, str] | None = None
    """Resource fields the next attempt is submitted with (an escalation)."""
    exclude: str | None = None
    """A node list the next attempt must avoid (added to the ones excluded before)."""
    note: str | None = None
    """Why the current attempt is followed by another one, or by none: kept on the attempt."""


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
    retries: dict[str, _Retries] = {}
    by_name = {job.name: job for job in jobs}
    for job in jobs:
        current, left = job.status, _Retries(job.retries_left > 0 or job.policy.escalates, job.interruptions_left > 0)
        if current in LIVE and job.record_state is not None and job.record_state != current:
            current = job.record_state
            if current in FINAL:
                current, left = _ended(job, current, result, now)
            else:
                result.updates[job.name] = Update(current)
        if current == JobState.PENDING.value and _follows_old_attempt(job, status):
            result.cancel.append(job.name)
            parents = ", ".join(d.job for d in job.dependencies if status.get(d.job) in _RESUBMITTED)
            result.updates[job.name] = Update(WAITING, note=f"cancelled while pending: {parents} is retried")
            current = WAITING
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


@dataclass(frozen=True)
class _Retries:
    """What a job may still be retried for: a failure of its own the workflow declared, an interruption."""

    declared: bool = False
    interruption: bool = False

    def blocks(self, kind: str) -> bool:
        """Whether a child depending by ``kind`` must wait in svc (a Slurm dependency would see the failure)."""
        return self.declared or (self.interruption and kind in ("afterany", "afternotok"))


_RESUBMITTED = frozenset({RETRYING, WAITING, "SUBMIT"})


def _ended(job: JobView, state: str, result: Plan, now: datetime) -> tuple[str, _Retries]:
    """Record an attempt that ended in ``state`` and retry it if its rules say so; the job's new status."""
    ended = Ended(
        state=state,
        policy=job.policy,
        retries_left=job.retries_left,
        interruptions_left=job.interruptions_left,
        node=job.node,
        memory=job.memory,
        time_limit=job.time_limit,
    )
    decision = decide(ended)
    if not isinstance(decision, Retry):
        result.updates[job.name] = Update(state, note=decision.reason)
        return state, _Retries()
    due = now if decision.at_once else now + timedelta(seconds=job.retry_delay)
    result.updates[job.name] = Update(
        RETRYING,
        retries_left=decision.retries_left,
        interruptions_left=decision.interruptions_left,
        next_retry_at=due,
        resources=decision.resources or None,
        exclude=decision.exclude,
        note=decision.reason,
    )
    return RETRYING, _Retries(decision.retries_left > 0 or job.policy.escalates, decision.interruptions_left > 0)


def _follows_old_attempt(job: JobView, status: dict[str, str]) -> bool:
    """A job pending in Slurm on a parent that is being submitted again (its dependency names the old attempt)."""
    return any(status.get(d.job) in _RESUBMITTED for d in job.dependencies if d.type in ("afterok", "after"))


def _edges(
    job: JobView, status: dict[str, str], retries: dict[str, _Retries], by_name: dict[str, JobView]
) -> tuple[bool, list[tuple[str, str]], str | None]:
    """``(blocked, handed to Slurm, reason it can never run)`` for a job's dependencies right now."""
    blocked = False
    handed: list[tuple[str, str]] = []
    for dependency in job.dependencies:
        parent = status.get(dependency.job, by_name[dependency.job].status)
        if parent in FINAL:
            if not satisfied(dependency.type, parent):
                return False, [], f"dependency {dependency} can never be satisfied: {dependency.job} ended {parent}"
        elif (parent in LIVE or parent == "SUBMIT") and not retries.get(dependency.job, _Retries()).blocks(
            dependency.type
        ):
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
