"""The usage parser on sacct output recorded from the dev cluster's Slurm 22.05 by ``record-sacct-usage.sh``
(tests/fixtures/slurm/README.md, "Job usage"): 17322 asked 4 CPUs, 2G and 10 minutes for a 5 s one-core
python holding 100 MB; 17323 ran two srun steps; 17324 held one GPU; array 17325 ran two tasks; 17326 failed;
17327 was cancelled while held (no steps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.domain.efficiency import job_efficiency
from svc_host.domain.usage import JobUsage
from svc_host.errors import SlurmParseError
from svc_host.slurm.argv import sacct_usage_argv
from svc_host.slurm.usage import parse_cpu_time, parse_sacct_usage, parse_size

RECORDED = (Path(__file__).parents[2] / "fixtures" / "slurm" / "sacct_usage.txt").read_text()
GIB, MIB, KIB = 1024**3, 1024**2, 1024


def test_the_overasking_job_shows_what_it_was_given_and_its_peak() -> None:
    usage = parse_sacct_usage(RECORDED)["17322"]
    assert usage == JobUsage(
        job_id="17322",
        cpus=4,
        mem_bytes=2 * GIB,
        gpus=0,
        time_limit_seconds=600,
        elapsed_seconds=6,
        cpu_seconds=1.962,
        max_rss_bytes=117492 * KIB,
    )


def test_the_peak_is_the_largest_step_and_cpu_time_the_allocations_sum() -> None:
    usage = parse_sacct_usage(RECORDED)["17323"]
    assert usage.max_rss_bytes == 32960 * KIB  # step 0, above .batch (1100K) and step 1 (820K)
    assert usage.cpu_seconds == pytest.approx(0.300)
    assert (usage.cpus, usage.mem_bytes, usage.time_limit_seconds) == (2, GIB, 0)  # UNLIMITED: no limit


def test_gpus_array_tasks_failures_and_jobs_without_steps() -> None:
    found = parse_sacct_usage(RECORDED)
    assert set(found) == {"17322", "17323", "17324", "17325_0", "17325_1", "17326", "17327"}
    assert (found["17324"].gpus, found["17324"].gpu_util_percent) == (1, None)  # no gres/gpuutil accounted here
    assert found["17325_1"].max_rss_bytes == 3288 * KIB
    assert found["17326"].mem_bytes == 500 * MIB
    pending = found["17327"]  # cancelled while held: no AllocTRES, so ReqMem; no step, so no peak
    assert (pending.mem_bytes, pending.max_rss_bytes, pending.elapsed_seconds, pending.gpus) == (
        1000 * MIB,
        None,
        0,
        None,
    )


def test_the_year_backfill_gives_a_job_without_a_limit_is_no_limit() -> None:
    """A job that asked for no time limit on a partition without one is recorded as UNLIMITED when the main
    scheduler starts it and as 365 days when backfill does (a busy machine): either way it is not told to ask for
    less time than it asked."""
    for recorded in ("UNLIMITED", "365-00:00:00"):
        line = f"9|COMPLETED|1|billing=1,cpu=1,mem=1000M,node=1|1000M|{recorded}|1|00:00.010||\n"
        usage = parse_sacct_usage(line)["9"]
        assert usage.time_limit_seconds == 0  # no limit, as Slurm takes --time=0
        assert job_efficiency(usage, state="COMPLETED")["flagged"] is False
    line = "9|COMPLETED|1|billing=1,cpu=1,mem=1000M,node=1|1000M|364-00:00:00|1|00:00.010||\n"
    assert job_efficiency(parse_sacct_usage(line)["9"], state="COMPLETED")["suggestions"] == [
        {"resource": "time", "message": "asked 364d, ran 1s: ask for 5m", "suggested": "5m"}
    ]


def test_a_job_accounting_still_calls_running_is_left_for_later() -> None:
    line = "9|RUNNING|1|cpu=1,mem=1G,node=1|1G|00:10:00|3|00:00:00||\n"
    assert parse_sacct_usage(line) == {}


def test_sizes_and_cpu_times_in_every_form_slurm_prints() -> None:
    assert parse_size("1038988K") == 1038988 * KIB
    assert parse_size("17.50M") == round(17.5 * MIB)
    assert parse_size("4000Mc", cpus=4) == 16000 * MIB  # per CPU, before Slurm 21.08
    assert parse_size("2Gn", nodes=2) == 4 * GIB
    assert parse_size("0") == 0
    assert parse_size("") is None
    assert parse_cpu_time("00:03.783") == pytest.approx(3.783)
    assert parse_cpu_time("01:02:03") == 3723
    assert parse_cpu_time("1-02:03:04") == 93784


@pytest.mark.parametrize(
    "stdout",
    ["1|COMPLETED|x|cpu=1|1G|00:10:00|3|00:01.000||\n", "1.batch|COMPLETED|1|||||00:01.000|lots|\n", "1|COMPLETED\n"],
)
def test_garbage_is_an_error_naming_the_line(stdout: str) -> None:
    with pytest.raises(SlurmParseError, match="sacct"):
        parse_sacct_usage(stdout)


def test_the_argv_asks_for_steps_and_checks_ids() -> None:
    argv = sacct_usage_argv(["12", "13_4"])
    assert "--allocations" not in argv
    assert argv[-1] == "--jobs=12,13_4"
    with pytest.raises(ValueError, match="invalid Slurm job id"):
        sacct_usage_argv(["12; rm -rf /"])
