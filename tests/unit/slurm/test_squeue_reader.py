"""``SqueueReader`` on two recorded real squeue answers a minute apart: the jobs of unchanged lines are kept,
changed and new lines are parsed, and the result is what ``parse_squeue`` makes of the later answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState
from svc_host.errors import SlurmParseError
from svc_host.slurm.parse import SqueueReader, parse_squeue

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slurm"
EARLIER = (FIXTURES / "squeue_jobs.txt").read_text(encoding="utf-8")
LATER = (FIXTURES / "squeue_jobs_later.txt").read_text(encoding="utf-8")


def test_later_answer_reads_as_parse_squeue_reads_it() -> None:
    reader = SqueueReader()
    assert reader.parse(EARLIER) == parse_squeue(EARLIER)
    assert reader.parse(LATER) == parse_squeue(LATER)


def test_unchanged_lines_keep_their_job_and_changed_lines_are_read_again() -> None:
    reader = SqueueReader()
    before = {job.job_id: job for job in reader.parse(EARLIER)}
    after = {job.job_id: job for job in reader.parse(LATER)}
    assert after["16"] is before["16"]  # the held job's line is the same a minute later
    assert after["13"] is not before["13"]
    assert (before["13"].state, after["13"].state) == (JobState.RUNNING, JobState.TIMEOUT)
    assert (before["5"].elapsed_seconds, after["5"].elapsed_seconds) == (53, 108)
    assert after["23"].state is JobState.COMPLETED
    assert [job.job_id for job in reader.parse(LATER)] == [job.job_id for job in parse_squeue(LATER)]


def test_a_job_that_left_the_queue_is_not_kept() -> None:
    reader = SqueueReader()
    reader.parse(LATER)
    assert reader.parse(EARLIER) == parse_squeue(EARLIER)
    assert "23" not in {job.job_id for job in reader.parse(EARLIER)}


def test_a_bad_line_raises_naming_it_and_the_next_answer_still_reads() -> None:
    reader = SqueueReader()
    reader.parse(EARLIER)
    lines = EARLIER.split("\n")
    lines.insert(2, "slurm_load_jobs error: Socket timed out on send/recv operation")
    with pytest.raises(SlurmParseError, match="squeue output on line 3"):
        reader.parse("\n".join(lines))
    assert reader.parse(LATER) == parse_squeue(LATER)


def test_blank_lines_and_carriage_returns_are_skipped() -> None:
    assert SqueueReader().parse("\n" + LATER.replace("\n", "\r\n") + "\n\n") == parse_squeue(LATER)
