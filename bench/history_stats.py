"""Benchmark: ``GET /api/history/stats`` over 1,000,000 stored jobs, read from the per-day counters.

Fills a throwaway SQLite store (migrated like any svc store) with ``--jobs`` finished and live jobs submitted
over the last year, counts them into ``job_day_stats`` as the migration that added it does, then times, side
by side and ``--repeat`` times each:

- ``GET /api/history/stats`` (in-process ASGI: routing, the store in a worker thread, the JSON answer) for all
  time, the last 30 days and one day (whole days: svc sums the day counters);
- the raw SQL svc runs now (a sum over the day rows), through the ``sqlite3`` module, for the same ranges;
- the raw SQL scan of the job rows it replaced (with migration 8's indexes), for the same ranges;
- that scan again with migration 8's indexes dropped.

    python bench/history_stats.py [--jobs 1000000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert, text

from svc_host.api.app import create_app
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.settings.paths import SvcPaths
from svc_host.store.migrations import backfill_job_day_stats
from svc_host.store.tables import JobRecord
from svc_host.testing.http import asgi_client, security_for_tests

STATES = (("COMPLETED", 70), ("FAILED", 12), ("CANCELLED", 8), ("TIMEOUT", 3), ("RUNNING", 4), ("PENDING", 3))
MIGRATION_8 = ("ix_job_state_submitted_elapsed", "ix_job_state_elapsed")


SELECT = "SELECT state, count(*), avg(elapsed_seconds) FROM job"
"""The scan ``history_stats`` ran before the day counters, for each kind of range."""
ALL, SINCE = f"{SELECT} GROUP BY state", f"{SELECT} WHERE submitted_at >= ? GROUP BY state"
BETWEEN = f"{SELECT} WHERE submitted_at >= ? AND submitted_at < ? GROUP BY state"
SUMS = "SELECT state, sum(jobs), sum(elapsed_sum), sum(elapsed_n), sum(measured), sum(cpu_used_ms) FROM job_day_stats"
"""What ``history_stats`` runs now for whole days (every counter column is summed alike)."""
DAY_ALL, DAY_SINCE = f"{SUMS} GROUP BY state", f"{SUMS} WHERE day >= ? GROUP BY state"
DAY_BETWEEN = f"{SUMS} WHERE day >= ? AND day <= ? GROUP BY state"


def fill(host: Host, count: int, now: datetime) -> None:
    """``count`` jobs over the last 365 days, in batches of 50,000 rows."""
    rng = random.Random(8)  # noqa: S311 - reproducible test data, not a secret
    names, weights = zip(*STATES, strict=True)
    with host.store.engine.begin() as conn:
        for start in range(0, count, 50_000):
            rows = []
            for number in range(start, min(count, start + 50_000)):
                submitted = now - timedelta(seconds=rng.uniform(0, 365 * 86400))
                state = rng.choices(names, weights)[0]
                finished = state not in ("RUNNING", "PENDING")
                rows.append(
                    {
                        "transport": "local",
                        "job_id": str(number + 1),
                        "name": f"job-{number % 500}",
                        "source": "web",
                        "state": state,
                        "raw_state": state,
                        "submitted_at": submitted,
                        "updated_at": submitted,
                        "elapsed_seconds": rng.randint(1, 86400) if finished else None,
                        "resources": '{"nodes": 1, "gpus_per_node": 1}',
                        "command": '["python", "train.py"]',
                        "env_var_names": "[]",
                    }
                )
            conn.execute(insert(JobRecord), rows)


def quantiles(samples: list[tuple[float, float]]) -> str:
    """p50 and max of the wall time, and p50 of the CPU time (this process, every thread): what the call costs
    with the machine to itself, as the wall time also counts waiting for cores other work holds."""
    walls = sorted(wall for wall, _ in samples)
    cpu = statistics.median(cpu for _, cpu in samples)
    return f"p50 {statistics.median(walls) * 1000:6.1f} ms (cpu {cpu * 1000:6.1f} ms)  max {walls[-1] * 1000:6.1f} ms"


async def timed(repeat: int, call: Callable[[], Awaitable[object]]) -> list[tuple[float, float]]:
    taken = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        await call()
        taken.append((time.perf_counter() - wall, time.process_time() - cpu))
    return taken


def timed_raw(db: Path, repeat: int, statement: str, params: tuple[str, ...]) -> list[tuple[float, float]]:
    with sqlite3.connect(db) as conn:
        taken = []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            conn.execute(statement, params).fetchall()
            taken.append((time.perf_counter() - wall, time.process_time() - cpu))
    return taken


async def main(count: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = SvcPaths(root / "etc.json", root / "config", root / "state", root)
        host = Host.create("web", paths=paths, plugins=create_plugin_manager(strict=True))
        db = paths.state_dir / "svc.db"
        now = datetime.now(UTC)
        started = time.perf_counter()
        fill(host, count, now)
        took = time.perf_counter() - started
        counting = time.perf_counter()
        with host.store.engine.begin() as conn:
            backfill_job_day_stats(conn)  # what the migration does on a store that already holds these jobs
            conn.execute(text("ANALYZE"))
        counted = time.perf_counter() - counting
        print(
            f"{count:,} jobs stored in {took:.0f} s (schema version {host.store.schema_version}); "
            f"counted into job_day_stats (the migration's backfill) and analysed in {counted:.1f} s"
        )
        month, day = (now - timedelta(days=30)).date(), (now - timedelta(days=3)).date()
        since_day = f"{day} 00:00:00.000000"
        ranges: dict[str, tuple[dict[str, str], str, tuple[str, ...]]] = {
            "all time": ({}, ALL, ()),
            "last 30 days": ({"from": month.isoformat()}, SINCE, (f"{month} 00:00:00.000000",)),
            "one day": (
                {"from": day.isoformat(), "to": day.isoformat()},
                BETWEEN,
                (since_day, f"{day + timedelta(days=1)} 00:00:00.000000"),
            ),
        }
        counters = {
            "all time": (DAY_ALL, ()),
            "last 30 days": (DAY_SINCE, (month.isoformat(),)),
            "one day": (DAY_BETWEEN, (day.isoformat(), day.isoformat())),
        }
        async with asgi_client(create_app(host, security=security_for_tests())) as client:
            for label, (params, statement, values) in ranges.items():

                async def stats(params: dict[str, str] = params) -> None:
                    response = await client.get("/api/history/stats", params=params)
                    response.raise_for_status()

                api = await timed(repeat, stats)
                summed = timed_raw(db, repeat, *counters[label])
                scan = timed_raw(db, repeat, statement, values)
                print(f"{label:>13}  GET /api/history/stats {quantiles(api)}")
                print(f"{'':>13}  raw SQL, day counters  {quantiles(summed)}")
                print(f"{'':>13}  raw SQL, scan of jobs  {quantiles(scan)}")
        with sqlite3.connect(db) as conn:
            for index in MIGRATION_8:
                conn.execute(f"DROP INDEX {index}")
            conn.execute("ANALYZE")
        for label, (_, statement, values) in ranges.items():
            raw = timed_raw(db, repeat, statement, values)
            print(f"{label:>13}  raw SQL, scan of jobs without migration 8's indexes  {quantiles(raw)}")
        await host.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=10)
    options = parser.parse_args()
    asyncio.run(main(options.jobs, options.repeat))
