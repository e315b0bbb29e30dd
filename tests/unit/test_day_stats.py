"""The per-day history counters equal a full scan of the jobs, on SQLite and PostgreSQL, through submissions,
status changes, runtime updates and usage; all-time and whole-day statistics read them."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.usage import JobUsage
from svc_host.store import day_stats
from svc_host.store import jobs as repo
from svc_host.store.database import Store
from svc_host.store.migrations import backfill_cluster_day_stats

GIB = 1024**3
NOW = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)


@pytest.fixture
def store(database_url: str) -> Store:
    return Store(database_url)


def scanned(session: Session) -> dict[str, list[int]]:
    """What the counters must hold, summed over every day, from the job rows."""
    return repo.scanned_sums(session, None, None)


def counted(session: Session) -> dict[str, list[int]]:
    return {state: sums for state, sums in day_stats.summed(session).items() if any(sums)}


def add(store: Store, job_id: str, when: datetime) -> None:
    store.call(
        repo.add_job,
        transport="local",
        job_id=job_id,
        name="j",
        source="cli",
        resources={"nodes": 1},
        command=["true"],
        now=when,
    )


def status(job_id: str, state: JobState, elapsed: int | None) -> JobStatus:
    return JobStatus(job_id=job_id, state=state, raw_state=state.value, elapsed_seconds=elapsed)


def test_counters_follow_every_write_exactly(store: Store) -> None:
    rng = random.Random(14)  # noqa: S311 - reproducible test data, not a secret
    for number in range(1, 41):
        add(store, str(number), NOW - timedelta(days=rng.randint(0, 5), hours=rng.randint(0, 23)))
    assert store.call(counted) == store.call(scanned)
    ids = [str(number) for number in range(1, 41)]
    for _ in range(3):  # running jobs' runtimes grow, then they end in every way
        running = {job_id: status(job_id, JobState.RUNNING, rng.randint(1, 50)) for job_id in ids}
        store.call(repo.apply_statuses, "local", running)
        assert store.call(counted) == store.call(scanned)
    ended = [JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT, JobState.OUT_OF_MEMORY]
    outcomes = {job_id: status(job_id, rng.choice(ended), rng.choice([None, 60, 600])) for job_id in ids[:30]}
    store.call(repo.apply_statuses, "local", outcomes)
    assert store.call(counted) == store.call(scanned)
    usages = {
        job_id: JobUsage(
            job_id=job_id,
            cpus=4,
            mem_bytes=2 * GIB,
            gpus=rng.randint(0, 2),
            time_limit_seconds=3600,
            elapsed_seconds=rng.randint(1, 3000),
            cpu_seconds=rng.uniform(0, 100),
            max_rss_bytes=rng.randint(1, 2 * GIB),
        )
        for job_id in ids[:20]
    }
    assert store.call(repo.record_usages, "local", usages) == 20
    assert store.call(repo.record_usages, "local", usages) == 0  # read once
    assert store.call(counted) == store.call(scanned)
    assert store.call(counted)["COMPLETED"][3] > 0  # usage is counted too, not only outcomes


def test_all_time_and_whole_day_stats_read_the_counters_and_equal_a_scan(store: Store) -> None:
    for number, days in enumerate((0, 0, 1, 3, 3, 9), start=1):
        add(store, str(number), NOW - timedelta(days=days))
    outcomes = {"1": status("1", JobState.COMPLETED, 10), "4": status("4", JobState.FAILED, 30)}
    store.call(repo.apply_statuses, "local", outcomes)
    usage = JobUsage(
        job_id="1",
        cpus=4,
        mem_bytes=2 * GIB,
        time_limit_seconds=600,
        elapsed_seconds=10,
        cpu_seconds=5.0,
        max_rss_bytes=GIB // 4,
    )
    store.call(repo.record_usages, "local", {"1": usage})
    everything = store.call(repo.history_stats)
    assert (everything["total"], everything["completed"], everything["failed"]) == (6, 1, 1)
    assert everything["avg_runtime_seconds"] == 20.0
    assert everything["efficiency"] == {
        "jobs": 2,
        "measured": 1,
        "flagged": 1,
        "cpu_percent": 12.5,
        "memory_percent": 12.5,
        "time_percent": 1.7,
        "gpu_hours": 0.0,
    }
    day = datetime.combine((NOW - timedelta(days=3)).date(), datetime.min.time(), tzinfo=UTC)
    one_day = store.call(repo.history_stats, since=day, until=day + timedelta(days=1))
    inside = store.call(repo.history_stats, since=day + timedelta(seconds=1), until=day + timedelta(days=1))
    assert (one_day["total"], one_day["failed"]) == (2, 1)
    assert inside == one_day  # the same jobs through a scan (a range inside a day)


@pytest.mark.parametrize(("start", "end"), [(12, 3 * 24 + 6), (0, 3 * 24 + 6), (12, 4 * 24), (1, 20), (-200, 400)])
def test_ranges_inside_days_add_edges_to_whole_days(store: Store, start: int, end: int) -> None:
    """A range that starts or ends inside a day counts exactly the jobs submitted in it (hours from a midnight)."""
    midnight = datetime.combine((NOW - timedelta(days=5)).date(), datetime.min.time(), tzinfo=UTC)
    submitted = [midnight + timedelta(hours=hours) for hours in range(-30, 130, 7)]
    for number, when in enumerate(submitted, start=1):
        add(store, str(number), when)
    since, until = midnight + timedelta(hours=start), midnight + timedelta(hours=end)
    expected = sum(since <= when < until for when in submitted)
    assert store.call(repo.history_stats, since=since, until=until)["total"] == expected


def test_the_backfill_counts_what_was_stored_before(store: Store) -> None:
    """Jobs stored before the counters existed (no usage columns yet) are counted by the migration."""
    for number in range(1, 6):
        add(store, str(number), NOW - timedelta(days=number))
    store.call(repo.apply_statuses, "local", {"2": status("2", JobState.COMPLETED, 7)})
    before = store.call(counted)
    with store.engine.begin() as conn:
        backfill_cluster_day_stats(conn)
        backfill_cluster_day_stats(conn)  # repeat-safe
    assert store.call(counted) == before


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_two_servers_seeing_the_same_end_count_it_once(database_url: str) -> None:
    """Two processes on one PostgreSQL apply the same status change at once: the second waits on the first's row
    lock, then finds the job ended, so the counters and transitions hold it once (SQLite has a single writer)."""
    first, second = Store(database_url), Store(database_url)
    add(first, "1", NOW)
    ended = {"1": status("1", JobState.COMPLETED, 30)}
    usage = {
        "1": JobUsage(job_id="1", cpus=2, mem_bytes=GIB, elapsed_seconds=30, cpu_seconds=3.0, max_rss_bytes=GIB // 8)
    }
    with Session(first.engine, expire_on_commit=False) as holding:
        assert [change.to_state for change in repo.apply_statuses(holding, "local", ended)] == ["COMPLETED"]
        assert repo.record_usages(holding, "local", usage) == 1
        with ThreadPoolExecutor(2) as pool:
            waiting = pool.submit(second.call, repo.apply_statuses, "local", ended)
            recording = pool.submit(second.call, repo.record_usages, "local", usage)
            time.sleep(1)
            assert not waiting.done()  # blocked on the row the first server holds
            holding.commit()
            assert waiting.result(timeout=30) == []
            assert recording.result(timeout=30) == 0
    assert first.call(counted) == first.call(scanned)
    assert first.call(counted)["COMPLETED"][:4] == [1, 30, 1, 1]
    record = first.call(repo.find_job, "local", "1")
    assert [t.to_state for t in first.call(repo.transitions, record.id)] == ["PENDING", "COMPLETED"]
    first.close()
    second.close()
