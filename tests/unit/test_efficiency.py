"""Efficiency of finished jobs and its suggestions (pure)."""

from __future__ import annotations

from svc_host.domain.efficiency import GPU_NOT_ACCOUNTED, Totals, format_bytes, format_duration, job_efficiency
from svc_host.domain.usage import JobUsage

GIB = 1024**3


def big_asker(**changes: object) -> JobUsage:
    usage = JobUsage(
        job_id="1",
        cpus=8,
        mem_bytes=64 * GIB,
        gpus=0,
        time_limit_seconds=4 * 3600,
        elapsed_seconds=720,
        cpu_seconds=1.2 * 720,
        max_rss_bytes=round(6.1 * GIB),
    )
    return usage.model_copy(update=changes)


def test_a_completed_job_using_little_of_what_it_asked_gets_concrete_suggestions() -> None:
    found = job_efficiency(big_asker(), state="COMPLETED")
    assert [flag["message"] for flag in found["suggestions"]] == [
        "asked 8 CPUs, used 1.2 on average: ask for 2",
        "asked 64G, peaked at 6.1G: ask for 8G",
        "asked 4h, ran 12m: ask for 20m",
    ]
    assert found["flagged"] is True
    assert (found["cpu"]["percent"], found["memory"]["percent"], found["time"]["percent"]) == (15.0, 9.5, 5.0)


def test_a_job_that_used_what_it_asked_is_not_flagged() -> None:
    tight = big_asker(cpus=1, cpu_seconds=700.0, mem_bytes=7 * GIB, time_limit_seconds=900)
    found = job_efficiency(tight, state="COMPLETED")
    assert found["suggestions"] == []
    assert found["flagged"] is False


def test_only_completed_jobs_are_flagged_but_all_are_measured() -> None:
    found = job_efficiency(big_asker(), state="FAILED")
    assert found["suggestions"] == []
    assert found["memory"]["percent"] == 9.5


def test_gpus_are_reported_and_missing_utilisation_said_plainly() -> None:
    assert job_efficiency(big_asker(gpus=2), state="COMPLETED")["gpus"] == {
        "allocated": 2,
        "utilisation_percent": None,
        "note": GPU_NOT_ACCOUNTED,
    }
    accounted = job_efficiency(big_asker(gpus=2, gpu_util_percent=37.0), state="COMPLETED")["gpus"]
    assert (accounted["utilisation_percent"], accounted["note"]) == (37.0, None)


def test_unknown_parts_are_none_not_zero() -> None:
    found = job_efficiency(JobUsage(job_id="1", cpus=1, mem_bytes=GIB, elapsed_seconds=0), state="CANCELLED")
    assert (found["cpu"], found["memory"], found["time"]) == (None, None, None)


def test_aggregates_weight_by_what_each_job_was_given() -> None:
    totals = Totals()
    totals.add(Totals.of(big_asker(), state="COMPLETED"))
    totals.add(Totals.of(big_asker(cpus=1, cpu_seconds=720.0, mem_bytes=8 * GIB, gpus=1), state="FAILED"))
    summary = totals.summary(jobs=3)
    assert summary["jobs"] == 3
    assert (summary["measured"], summary["flagged"]) == (2, 1)
    assert summary["cpu_percent"] == round(100 * (1.2 * 720 + 720) / (9 * 720), 1)
    assert summary["gpu_hours"] == 0.2


def test_sizes_and_durations_read_like_slurm_arguments() -> None:
    assert [format_bytes(v) for v in (2 * GIB, round(6.1 * GIB), 101 * 1024**2, 512 * 1024)] == [
        "2G",
        "6.1G",
        "101M",
        "512K",
    ]
    assert [format_duration(s) for s in (4 * 3600, 720, 5400, 5, 2 * 86400 + 3 * 3600 + 60)] == [
        "4h",
        "12m",
        "1h30m",
        "5s",
        "2d3h",
    ]


def test_memory_is_flagged_only_when_the_suggestion_frees_a_gigabyte() -> None:
    default = big_asker(mem_bytes=1000 * 1024**2, max_rss_bytes=1024**2)  # a site's default, not asked for
    assert [flag["resource"] for flag in job_efficiency(default, state="COMPLETED")["suggestions"]] == ["cpu", "time"]
