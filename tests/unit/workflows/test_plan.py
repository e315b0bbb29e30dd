"""The engine's pure decisions: what to submit with which dependencies, retries, skips and the run outcome."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from svc_host.workflows.model import Dependency
from svc_host.workflows.plan import RETRYING, SKIPPED, WAITING, JobView, Update, plan
from svc_host.workflows.retries import RetryPolicy

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RETRY_2 = RetryPolicy(retry=2)


def job(name: str, *deps: str, **fields: Any) -> JobView:
    fields.setdefault("status", WAITING)
    return JobView(name=name, dependencies=tuple(Dependency.parse(d) for d in deps), **fields)


def test_a_fresh_diamond_is_submitted_at_once_with_slurm_dependencies() -> None:
    jobs = [job("a"), job("b", "a"), job("c", "afterany:a"), job("d", "b", "c")]
    decided = plan(jobs, NOW)
    assert decided.submit == [
        ("a", []),
        ("b", [("afterok", "a")]),
        ("c", [("afterany", "a")]),
        ("d", [("afterok", "b"), ("afterok", "c")]),
    ]
    assert decided.run_status is None


def test_children_of_a_retryable_parent_wait_in_svc() -> None:
    jobs = [job("a", retries_left=2), job("b", "a"), job("c", "b")]
    assert plan(jobs, NOW).submit == [("a", [])]
    live = [
        job("a", status="RUNNING", record_state="RUNNING", job_id="1", retries_left=2),
        job("b", "a"),
        job("c", "b"),
    ]
    assert plan(live, NOW).submit == []


def test_a_failed_attempt_with_retries_left_is_retried_after_the_delay() -> None:
    jobs = [
        job("a", status="RUNNING", record_state="FAILED", job_id="1", retries_left=2, retry_delay=30, policy=RETRY_2),
        job("b", "a"),
    ]
    decided = plan(jobs, NOW)
    due = NOW + timedelta(seconds=30)
    retried = Update(RETRYING, retries_left=1, interruptions_left=0, next_retry_at=due, note="FAILED: retry 1 of 2")
    assert decided.updates == {"a": retried}
    assert decided.submit == []
    assert decided.wake_at == NOW + timedelta(seconds=30)
    later = [job("a", status=RETRYING, retries_left=1, next_retry_at=NOW), job("b", "a")]
    assert plan(later, NOW + timedelta(seconds=1)).submit == [("a", [])]


def test_the_last_attempt_lets_children_go_to_slurm() -> None:
    jobs = [job("a", status=RETRYING, retries_left=0, next_retry_at=NOW), job("b", "a")]
    assert plan(jobs, NOW).submit == [("a", []), ("b", [("afterok", "a")])]


def test_a_cancelled_job_is_not_retried_and_its_afterok_children_are_skipped() -> None:
    jobs = [
        job("a", status="RUNNING", record_state="CANCELLED", job_id="1", retries_left=3),
        job("b", "a", status="PENDING", record_state="PENDING", job_id="2"),
        job("c", "afternotok:a", status="PENDING", record_state="PENDING", job_id="3"),
    ]
    decided = plan(jobs, NOW)
    assert decided.updates["a"] == Update("CANCELLED", note="CANCELLED: never retried")
    assert decided.cancel == ["b"]
    assert decided.updates["b"].status == SKIPPED
    assert "c" not in decided.updates  # afternotok: Slurm starts it
    assert decided.run_status is None


def test_afternotok_child_of_a_completed_parent_is_skipped_and_the_run_completes() -> None:
    jobs = [
        job("a", status="RUNNING", record_state="COMPLETED", job_id="1"),
        job("cleanup", "afternotok:a", status="PENDING", record_state="PENDING", job_id="2"),
    ]
    decided = plan(jobs, NOW)
    assert decided.cancel == ["cleanup"]
    assert decided.run_status == "completed"


def test_a_run_fails_only_once_nothing_is_live() -> None:
    jobs = [
        job("a", status="RUNNING", record_state="FAILED", job_id="1", exit_code=3),
        job("b", "a"),
        job("slow", status="RUNNING", record_state="RUNNING", job_id="2"),
    ]
    decided = plan(jobs, NOW)
    assert decided.updates["b"].status == SKIPPED
    assert decided.run_status is None
    done = [
        job("a", status="FAILED", job_id="1", exit_code=3, attempt=3),
        job("b", "a", status=SKIPPED),
        job("slow", status="RUNNING", record_state="COMPLETED", job_id="2"),
    ]
    decided = plan(done, NOW)
    assert decided.run_status == "failed"
    assert decided.run_error == "job 'a' ended FAILED (exit code 3) after 3 attempts; skipped: b"


def test_waiting_on_a_submitting_parent_blocks() -> None:
    jobs = [job("a", status="SUBMITTING"), job("b", "a")]
    decided = plan(jobs, NOW)
    assert decided.submit == []
    assert decided.run_status is None
