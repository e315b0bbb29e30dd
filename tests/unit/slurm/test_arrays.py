"""Job array ids, on output recorded from the dev cluster's array 13402 (``--array=0-5%2``, task 2 exits 3; see
tests/fixtures/slurm/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState
from svc_host.slurm.arrays import array_flag, array_of, checked_job_id, in_range, is_range, task_id, task_ids
from svc_host.slurm.parse import parse_sacct, parse_squeue

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"
TASKS = [f"13402_{index}" for index in range(6)]


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_squeue_with_array_lists_every_task_on_its_own_line() -> None:
    jobs = {job.job_id: job for job in parse_squeue(_read("squeue_array_tasks.txt"))}
    assert sorted(jobs) == TASKS
    assert [jobs[task].state for task in TASKS] == [JobState.RUNNING] * 2 + [JobState.PENDING] * 4
    assert jobs["13402_3"].reason == "JobArrayTaskLimit"


def test_pending_ranges_of_squeue_and_sacct_read_back_as_their_tasks() -> None:
    squeue = [job.job_id for job in parse_squeue(_read("squeue_array_ranges.txt"))]
    sacct = [job.job_id for job in parse_sacct(_read("sacct_array_pending.txt"))]
    assert "13402_[2-5%2]" in squeue
    assert "13402_[2-5%2]" in sacct
    for listed in (squeue, sacct):
        assert sorted(task for job_id in listed for task in task_ids(job_id)) == TASKS
        assert {array_of(job_id) for job_id in listed} == {"13402"}


def test_sacct_gives_every_ended_task_its_own_state_and_exit_code() -> None:
    jobs = {job.job_id: job for job in parse_sacct(_read("sacct_array_tasks.txt"))}
    assert sorted(jobs) == TASKS
    assert (jobs["13402_2"].state, jobs["13402_2"].exit_code) == (JobState.FAILED, 3)
    assert {jobs[task].state for task in TASKS if task != "13402_2"} == {JobState.COMPLETED}
    ran = {task: (jobs[task].ended_at - jobs[task].started_at).total_seconds() for task in TASKS}  # type: ignore[operator]
    assert ran == {**dict.fromkeys(TASKS, 12.0), "13402_2": 0.0}  # each task's own start and end, from accounting


@pytest.mark.parametrize(
    ("job_id", "tasks"),
    [
        ("7_[1,3,5-7]", ["7_1", "7_3", "7_5", "7_6", "7_7"]),
        ("7_[4]", ["7_4"]),
        ("7_4", ["7_4"]),
        ("7", ["7"]),
    ],
)
def test_task_ids(job_id: str, tasks: list[str]) -> None:
    assert task_ids(job_id) == tasks


@pytest.mark.parametrize("job_id", ["7_[5-3]", "7_[a-b]", "7_[1-3", "7_[]"])
def test_malformed_ranges_are_refused(job_id: str) -> None:
    with pytest.raises(ValueError, match="malformed array task range"):
        task_ids(job_id)


def test_array_of_and_task_id() -> None:
    assert [array_of(job_id) for job_id in ("12_3", "12_[0-9%4]", "12", "12+0")] == ["12", "12", None, None]
    assert task_id("12", 3) == "12_3"


def test_array_flag() -> None:
    assert array_flag(1000, 50) == "0-999%50"
    assert array_flag(1, 1) == "0-0%1"
    with pytest.raises(ValueError, match="at least one task"):
        array_flag(0, 4)


@pytest.mark.parametrize("job_id", ["1", "123_4", "4294967295", "0"])
def test_checked_job_id_takes_jobs_and_tasks(job_id: str) -> None:
    assert checked_job_id(job_id) == job_id


@pytest.mark.parametrize("job_id", ["-3", "abc", "12_", "12_[1-3]", "4294967296", "1_2_3", " 12", "12.batch", ""])
def test_checked_job_id_refuses_the_rest(job_id: str) -> None:
    with pytest.raises(ValueError, match="job id must be a non-negative integer, or <id>_<index> for an array task"):
        checked_job_id(job_id)


def test_ranges_only_where_asked() -> None:
    assert checked_job_id("12_[1-3,7]", ranges=True) == "12_[1-3,7]"
    with pytest.raises(ValueError, match="runs backwards"):
        checked_job_id("12_[3-1]", ranges=True)
    with pytest.raises(ValueError, match="or <id>_\\[a-b\\] for tasks of an array"):
        checked_job_id("12_[1-3%2]", ranges=True)


def test_in_range_without_listing_tasks() -> None:
    assert is_range("12_[0-999999999]")
    assert not is_range("12_3")
    assert in_range("12_[0-999999999]", "12_123456")
    assert in_range("12_[1-3,7]", "12_7")
    assert not in_range("12_[1-3,7]", "12_5")
    assert not in_range("12_[1-3]", "13_2")
    assert not in_range("12_[1-3]", "12")
