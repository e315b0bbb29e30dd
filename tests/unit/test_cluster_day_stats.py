"""History statistics of one cluster: the per-day counters are kept per cluster, so one cluster's numbers come
from counters too and equal a scan of that cluster's jobs; every cluster's are their sum. A database made before
the split is counted per cluster by the migration, usage included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.usage import JobUsage
from svc_host.store import jobs as repo
from svc_host.store.database import Store
from svc_host.store.migrations import backfill_cluster_day_stats

NOW = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)
GIB = 1024**3


@pytest.fixture
def store(database_url: str) -> Store:
    store = Store(database_url)
    for number, (cluster, state) in enumerate(
        [
            ("lab22", JobState.COMPLETED),
            ("lab22", JobState.FAILED),
            ("lab24", JobState.COMPLETED),
            ("lab24", JobState.COMPLETED),
            ("lab24", JobState.CANCELLED),
            ("local", JobState.RUNNING),
        ],
        start=1,
    ):
        job_id = "7"  # the same id on every cluster: clusters number their jobs independently
        store.call(
            repo.add_job,
            transport=cluster,
            job_id=job_id,
            name=f"j{number}",
            source="web",
            resources={"nodes": 1},
            command=["true"],
            now=NOW - timedelta(days=number % 3),
        )
        done = JobStatus(job_id=job_id, state=state, raw_state=state.value, elapsed_seconds=10 * number)
        store.call(repo.apply_statuses, cluster, {job_id: done})
    usage = JobUsage(job_id="7", cpus=2, mem_bytes=GIB, elapsed_seconds=30, cpu_seconds=6.0, max_rss_bytes=GIB // 4)
    store.call(repo.record_usages, "lab24", {"7": usage})
    return store


def stats(store: Store, cluster: str | None) -> dict[str, object]:
    return store.call(repo.history_stats, transport=cluster)


def test_each_cluster_counts_its_own_jobs(store: Store) -> None:
    assert {name: stats(store, name)["total"] for name in ("lab22", "lab24", "local", "nowhere")} == {
        "lab22": 2,
        "lab24": 3,
        "local": 1,
        "nowhere": 0,
    }
    lab24 = stats(store, "lab24")
    assert (lab24["completed"], lab24["failed"], lab24["cancelled"]) == (2, 0, 1)
    assert stats(store, "lab22")["failed"] == 1
    assert stats(store, None)["total"] == 6


def test_one_cluster_from_counters_equals_a_scan_of_its_jobs(store: Store) -> None:
    for cluster in ("lab22", "lab24"):
        whole_days = store.call(repo.history_stats, transport=cluster)  # counters only
        scanned = store.call(repo.history_stats, since=NOW - timedelta(days=30, seconds=1), transport=cluster)
        assert whole_days == scanned  # a range starting inside a day scans its first day


def test_the_migration_counts_earlier_jobs_per_cluster_with_their_usage(store: Store) -> None:
    before = {name: stats(store, name) for name in ("lab22", "lab24", None)}
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM job_cluster_day_stats"))
    assert stats(store, None)["total"] == 0
    with store.engine.begin() as conn:
        backfill_cluster_day_stats(conn)
        backfill_cluster_day_stats(conn)  # repeat-safe
    assert {name: stats(store, name) for name in ("lab22", "lab24", None)} == before
    assert before["lab24"]["efficiency"] == stats(store, "lab24")["efficiency"]
