"""A sweep cell's state and times are its jobs': a cell of an array sweep whose task Slurm keeps PENDING is queued
with no start; one whose task ran took the task's End - Start, not the time since the sweep started."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from svc_host.sweeps.cell_timing import JobTimes, cell_timing

SWEEP_START = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def test_a_cell_whose_task_waits_in_the_queue_is_queued_and_not_started() -> None:
    assert cell_timing([JobTimes("PENDING", None, None)]) == {
        "job_state": "PENDING",
        "job_started_at": None,
        "job_ended_at": None,
    }


def test_a_cell_that_ran_took_its_tasks_time() -> None:
    start = SWEEP_START + timedelta(seconds=43)  # it waited for its array's limit
    end = start + timedelta(seconds=40)
    timing = cell_timing([JobTimes("COMPLETED", start, end)])
    assert timing == {
        "job_state": "COMPLETED",
        "job_started_at": "2026-11-28T12:00:43+00:00",
        "job_ended_at": "2026-11-28T12:01:23+00:00",
    }


def test_a_running_cell_has_no_end_and_a_cell_of_two_jobs_spans_both() -> None:
    first = JobTimes("COMPLETED", SWEEP_START, SWEEP_START + timedelta(seconds=5))
    second = JobTimes("RUNNING", SWEEP_START + timedelta(seconds=6), None)
    assert cell_timing([first, second])["job_state"] == "RUNNING"
    assert cell_timing([first, second])["job_ended_at"] is None
    done = JobTimes("FAILED", SWEEP_START + timedelta(seconds=6), SWEEP_START + timedelta(seconds=9))
    assert cell_timing([first, done]) == {
        "job_state": "FAILED",
        "job_started_at": "2026-11-28T12:00:00+00:00",
        "job_ended_at": "2026-11-28T12:00:09+00:00",
    }


def test_a_cell_without_a_submitted_job_says_nothing() -> None:
    assert cell_timing([]) == {"job_state": None, "job_started_at": None, "job_ended_at": None}


def test_a_task_cancelled_before_it_started_took_nothing() -> None:
    assert cell_timing([JobTimes("CANCELLED", None, SWEEP_START)])["job_started_at"] is None
    assert cell_timing([JobTimes("CANCELLED", None, SWEEP_START)])["job_ended_at"] is None
