"""Interactive sessions as svc sees them: their states, why one ended, and the one pure decision of what comes next.

A session is a Slurm job running a web app, so its state follows the job's (``queued`` while the job waits) and
then the app's: ``starting`` while the job runs and the app has not answered yet, ``ready`` once it has, and
``ended`` with a reason. ``next_state`` decides from facts the watch gathered (the job's state, whether the node
guard wrote where it listens, whether the app answered, whether it exited, the clock); it never asks anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from svc_host.domain.jobs import JobState


class SessionState(StrEnum):
    QUEUED = "queued"
    STARTING = "starting"
    READY = "ready"
    ENDED = "ended"


class EndReason(StrEnum):
    """Why a session ended, in the words every face shows."""

    STOPPED = "stopped"
    """Someone asked svc to stop it."""
    TIME_LIMIT = "time_limit"
    """The job reached its time limit."""
    APP_EXITED = "app_exited"
    """The app exited (the guard wrote ``exit.json``); the detail is the tail of its stderr."""
    NODE_FAILURE = "node_failure"
    """Slurm lost the node (or could not boot it)."""
    START_TIMEOUT = "start_timeout"
    """The app did not answer within its kind's start timeout after the job started; svc cancels the job."""
    IDLE_TIMEOUT = "idle_timeout"
    """No traffic (and no busy kernel) for the session's idle minutes; svc cancels the job."""
    JOB_ENDED = "job_ended"
    """The job ended for another reason (cancelled outside svc, failed, preempted...)."""


ENDED_BY_JOB_STATE = {
    JobState.TIMEOUT: EndReason.TIME_LIMIT,
    JobState.NODE_FAIL: EndReason.NODE_FAILURE,
    JobState.BOOT_FAIL: EndReason.NODE_FAILURE,
}
"""Job states that say why by themselves, before anything the app did (a time limit also makes the app exit)."""


@dataclass(frozen=True)
class SessionFacts:
    """What the watch knows of one session at ``now``."""

    state: SessionState
    job_state: JobState
    now: datetime
    started_at: datetime | None = None
    """When the job started running (the start timeout counts from here)."""
    start_timeout: float = 300.0
    endpoint_known: bool = False
    """The node guard's ``endpoint.json`` was read."""
    guard_up: bool = False
    """The guard's ``endpoint.json`` appeared while the job is still pending as the monitor last saw it: the guard
    runs in the job, so the job runs (the monitor's next look at the queue will say so)."""
    app_answered: bool = False
    """The kind's ready path answered 2xx/3xx through the way in."""
    app_exit_code: int | None = None
    """The code in the guard's ``exit.json``, once the app exited."""
    ended_by_svc: EndReason | None = None
    """Why svc asked Slurm to end the job (stopped, idle timeout), if it did."""


@dataclass(frozen=True)
class Transition:
    """Where a session goes: its state, the end reason when ``ENDED``, and whether svc must cancel the job."""

    state: SessionState
    end_reason: EndReason | None = None
    cancel_job: bool = False


def next_state(facts: SessionFacts) -> Transition:
    """The session's next state. Ended is final; svc's own reason to end wins, then what the job's end says, then
    the app's exit; a running job's session is ready once its app answered (and stays ready: one failed probe is
    no reason to go back), and ends with ``start_timeout`` when it did not answer in time."""
    if facts.state is SessionState.ENDED:
        return Transition(SessionState.ENDED)
    return _ending(facts) or _moving(facts)


def _ending(facts: SessionFacts) -> Transition | None:
    """How the session ends now, if it does: svc's reason, the job's, the app's exit, the job's end."""
    live = not facts.job_state.is_terminal
    if facts.ended_by_svc is not None:
        return Transition(SessionState.ENDED, facts.ended_by_svc, cancel_job=live)
    if facts.job_state in ENDED_BY_JOB_STATE:
        return Transition(SessionState.ENDED, ENDED_BY_JOB_STATE[facts.job_state])
    if facts.app_exit_code is not None:
        return Transition(SessionState.ENDED, EndReason.APP_EXITED, cancel_job=live)
    if not live:
        return Transition(SessionState.ENDED, EndReason.JOB_ENDED)
    return None


def _moving(facts: SessionFacts) -> Transition:
    """The state of a session whose job lives (a pending job whose guard is up runs)."""
    if facts.job_state is JobState.PENDING and not facts.guard_up:
        return Transition(SessionState.QUEUED)
    if facts.job_state not in (
        JobState.RUNNING,
        JobState.PENDING,
    ):  # suspended, or the scheduler could not say: no news
        return Transition(facts.state)
    if facts.state is SessionState.READY or (facts.endpoint_known and facts.app_answered):
        return Transition(SessionState.READY)
    if facts.started_at is not None and (facts.now - facts.started_at).total_seconds() > facts.start_timeout:
        return Transition(SessionState.ENDED, EndReason.START_TIMEOUT, cancel_job=True)
    return Transition(SessionState.STARTING)


class SessionView(BaseModel):
    """One session as every face shows it: keyed (cluster, job id) like a job, never by its id alone."""

    model_config = ConfigDict(frozen=True)

    cluster: str
    job_id: str
    kind: str
    state: SessionState
    end_reason: EndReason | None = None
    end_detail: str | None = None
    """For ``app_exited``: the exit code and the tail of the app's stderr."""
    created_at: datetime
    started_at: datetime | None = None
    ready_at: datetime | None = None
    ended_at: datetime | None = None
    time_left_seconds: int | None = None
    """Until the job's time limit, while it runs; ``None`` without a limit or when not running."""
    idle_minutes: int | None = None
    open_path: str = ""
