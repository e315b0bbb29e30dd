"""A job's time limit as a user reads it: Slurm's 365 days for a job without a limit (a backfilled one, in
squeue, scontrol and sacct alike) is "UNLIMITED", as svc's own records say it; a real limit keeps its spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.slurm.parse import parse_sacct, parse_squeue
from svc_host.slurm.values import format_job_time_limit

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"


def test_accounting_of_jobs_svc_did_not_submit_says_unlimited() -> None:
    recorded = (FIXTURES / "sacct_jobs.txt").read_text(encoding="utf-8")
    assert "|365-00:00:00|" in recorded.splitlines()[0]
    jobs = {job.job_id: job for job in parse_sacct(recorded)}
    assert jobs["4485"].time_limit == "UNLIMITED"
    assert jobs["4487"].time_limit == "UNLIMITED"


def test_the_queue_says_unlimited_too() -> None:
    jobs = {job.job_id: job for job in parse_squeue((FIXTURES / "squeue_queue.txt").read_text(encoding="utf-8"))}
    assert (jobs["5"].time_limit, jobs["16"].time_limit) == ("UNLIMITED", "UNLIMITED")


@pytest.mark.parametrize(
    ("text", "shown"),
    [("1:00", "00:01:00"), ("1-00:00:00", "1-00:00:00"), ("364-23:59:59", "364-23:59:59"), ("INFINITE", "UNLIMITED")],
)
def test_other_limits_keep_their_spelling(text: str, shown: str | None) -> None:
    assert format_job_time_limit(text) == shown


def test_a_partitions_limit_is_no_limit_of_the_job() -> None:
    assert format_job_time_limit("Partition_Limit") is None
