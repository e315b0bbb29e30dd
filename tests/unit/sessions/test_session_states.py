"""The pure decision of a session's next state: every transition and every end reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.sessions import EndReason, SessionFacts, SessionState, Transition, next_state

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
Q, S, R, E = SessionState.QUEUED, SessionState.STARTING, SessionState.READY, SessionState.ENDED


def facts(state: SessionState, job: JobState, **given: object) -> SessionFacts:
    return SessionFacts(state=state, job_state=job, now=NOW, **given)  # type: ignore[arg-type]


def test_a_waiting_job_is_queued() -> None:
    assert next_state(facts(Q, JobState.PENDING)) == Transition(Q)


def test_a_pending_job_whose_guard_is_up_runs_before_the_monitor_says_so() -> None:
    up = facts(Q, JobState.PENDING, started_at=NOW, endpoint_known=True, guard_up=True)
    assert next_state(up) == Transition(S)
    assert next_state(facts(Q, JobState.PENDING, endpoint_known=True, guard_up=True, app_answered=True)) == Transition(
        R
    )
    late = facts(S, JobState.PENDING, started_at=NOW - timedelta(hours=1), start_timeout=60, guard_up=True)
    assert next_state(late) == Transition(E, EndReason.START_TIMEOUT, cancel_job=True)


def test_a_running_job_whose_app_has_not_answered_is_starting() -> None:
    assert next_state(facts(Q, JobState.RUNNING, started_at=NOW)) == Transition(S)
    assert next_state(facts(S, JobState.RUNNING, started_at=NOW, endpoint_known=True)) == Transition(S)


def test_the_app_answering_through_its_endpoint_makes_it_ready() -> None:
    ready = facts(S, JobState.RUNNING, started_at=NOW, endpoint_known=True, app_answered=True)
    assert next_state(ready) == Transition(R)
    assert next_state(facts(Q, JobState.RUNNING, endpoint_known=True, app_answered=True)) == Transition(R)


def test_a_ready_session_stays_ready_when_one_probe_fails() -> None:
    assert next_state(facts(R, JobState.RUNNING, started_at=NOW - timedelta(hours=5))) == Transition(R)


def test_stop_while_starting_ends_it_stopped_and_cancels_the_job() -> None:
    stopping = facts(S, JobState.RUNNING, started_at=NOW, ended_by_svc=EndReason.STOPPED)
    assert next_state(stopping) == Transition(E, EndReason.STOPPED, cancel_job=True)


def test_stop_while_queued_cancels_and_a_cancelled_job_ends_stopped() -> None:
    assert next_state(facts(Q, JobState.PENDING, ended_by_svc=EndReason.STOPPED)) == Transition(
        E, EndReason.STOPPED, cancel_job=True
    )
    assert next_state(facts(R, JobState.CANCELLED, ended_by_svc=EndReason.STOPPED)) == Transition(E, EndReason.STOPPED)


def test_no_answer_within_the_start_timeout_ends_it_and_cancels_the_job() -> None:
    late = facts(S, JobState.RUNNING, started_at=NOW - timedelta(seconds=301), start_timeout=300.0)
    assert next_state(late) == Transition(E, EndReason.START_TIMEOUT, cancel_job=True)
    in_time = facts(S, JobState.RUNNING, started_at=NOW - timedelta(seconds=299), start_timeout=300.0)
    assert next_state(in_time) == Transition(S)


def test_the_start_timeout_counts_from_the_job_start_not_the_queue() -> None:
    assert next_state(facts(Q, JobState.PENDING, start_timeout=1.0)) == Transition(Q)


def test_the_app_exiting_ends_it_at_once_with_its_reason() -> None:
    exited = facts(R, JobState.RUNNING, started_at=NOW, app_exit_code=1)
    assert next_state(exited) == Transition(E, EndReason.APP_EXITED, cancel_job=True)
    assert next_state(facts(S, JobState.FAILED, app_exit_code=3)) == Transition(E, EndReason.APP_EXITED)


def test_the_time_limit_is_said_even_though_the_app_was_made_to_exit() -> None:
    assert next_state(facts(R, JobState.TIMEOUT, app_exit_code=143)) == Transition(E, EndReason.TIME_LIMIT)


@pytest.mark.parametrize("job", [JobState.NODE_FAIL, JobState.BOOT_FAIL])
def test_a_lost_node_is_a_node_failure(job: JobState) -> None:
    assert next_state(facts(R, job)) == Transition(E, EndReason.NODE_FAILURE)


@pytest.mark.parametrize("job", [JobState.CANCELLED, JobState.COMPLETED, JobState.PREEMPTED, JobState.OUT_OF_MEMORY])
def test_any_other_end_of_the_job_is_job_ended(job: JobState) -> None:
    assert next_state(facts(S, job)) == Transition(E, EndReason.JOB_ENDED)


def test_idle_timeout_is_svcs_own_reason() -> None:
    idle = facts(R, JobState.RUNNING, ended_by_svc=EndReason.IDLE_TIMEOUT)
    assert next_state(idle) == Transition(E, EndReason.IDLE_TIMEOUT, cancel_job=True)


@pytest.mark.parametrize("job", [JobState.SUSPENDED, JobState.UNKNOWN])
def test_no_news_from_the_scheduler_keeps_the_state_and_starts_no_timeout(job: JobState) -> None:
    long_ago = NOW - timedelta(hours=1)
    assert next_state(facts(S, job, started_at=long_ago, start_timeout=1.0)) == Transition(S)
    assert next_state(facts(R, job)) == Transition(R)


def test_ended_is_final() -> None:
    assert next_state(facts(E, JobState.RUNNING, app_answered=True, endpoint_known=True)) == Transition(E)
