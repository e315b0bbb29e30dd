"""The store: migrations, recording submissions and transitions, history and statistics."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlmodel import Session, SQLModel

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import as_utc
from svc_host.domain.usage import JobUsage
from svc_host.errors import ConfigError
from svc_host.store import jobs as repo
from svc_host.store.database import Store
from svc_host.store.migrations import MIGRATIONS
from svc_host.testing.waiting import DEADLINE
from svc_host.workflows import store as runs


@pytest.fixture
def store(database_url: str) -> Store:
    return Store(database_url)


def add(store: Store, job_id: str, *, name: str = "j", source: str = "cli", when: datetime | None = None) -> None:
    store.call(
        repo.add_job,
        transport="local",
        job_id=job_id,
        name=name,
        source=source,
        resources={"nodes": 2, "gpus_per_node": 2, "partition": "gpu"},
        command=["python", "train.py"],
        env_var_names=["WANDB_API_KEY"],
        now=when,
    )


def test_a_fresh_database_is_migrated_to_the_latest_version(store: Store) -> None:
    assert store.schema_version == len(MIGRATIONS)
    tables = inspect(store.engine)
    for table in SQLModel.metadata.sorted_tables:
        db_columns = {column["name"] for column in tables.get_columns(table.name)}
        assert db_columns == {column.name for column in table.columns}, table.name


def test_reopening_keeps_rows_and_does_not_migrate_twice(database_url: str) -> None:
    url = database_url
    first = Store(url)
    add(first, "7")
    first.close()
    again = Store(url)
    assert [row.job_id for row in again.call(repo.history)] == ["7"]
    with again.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM schema_version")).scalar() == 1


def test_a_database_from_before_migrations_is_upgraded(database_url: str) -> None:
    url = database_url
    with Store(url).engine.begin() as conn:  # simulate a version-0 database: nothing recorded
        conn.execute(text("DROP TABLE job_transition"))
        conn.execute(text("DROP TABLE job"))
        conn.execute(text("DELETE FROM schema_version"))
    assert Store(url).schema_version == len(MIGRATIONS)


KILLED_MID_MIGRATION = """
import os, signal, sys
from svc_host.store import database, migrations

# die (SIGKILL, as an OOM killer or kill -9 would) after migration 2's tables, before its version row
die = lambda conn: os.kill(os.getpid(), signal.SIGKILL)
migrations.MIGRATIONS = (migrations.MIGRATIONS[0], (*migrations.MIGRATIONS[1], die), *migrations.MIGRATIONS[2:])
database.Store(sys.argv[1])
"""


def versions(url: str) -> tuple[list[int], set[str]]:
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            rows = [row[0] for row in conn.execute(text("SELECT version FROM schema_version"))]
            tables = set(inspect(conn).get_table_names())
    finally:
        engine.dispose()
    return rows, tables


def test_a_migration_killed_before_its_version_row_is_undone_and_runs_again(database_url: str) -> None:
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_MIGRATION, database_url], check=False)
    assert killed.returncode == -signal.SIGKILL
    rows, tables = versions(database_url)
    assert rows == [1]  # migration 1 committed with its version row; migration 2 rolled back entirely
    assert "job" in tables
    assert "workflow_run" not in tables
    store = Store(database_url)
    assert store.schema_version == len(MIGRATIONS)
    add(store, "7")
    assert versions(database_url)[0] == [len(MIGRATIONS)]


def test_tables_without_a_version_row_are_adopted(tmp_path: Path) -> None:
    """What an earlier svc left when killed mid-migration: SQLite had committed each CREATE TABLE at once."""
    path = tmp_path / "svc.db"
    with sqlite3.connect(path, isolation_level=None) as conn:
        for statement in MIGRATIONS[0]:
            assert isinstance(statement, str)
            conn.execute(statement.replace(" IF NOT EXISTS", ""))
    store = Store(f"sqlite:///{path}")
    assert store.schema_version == len(MIGRATIONS)
    add(store, "7")


def test_every_migration_runs_twice_without_harm(database_url: str) -> None:
    url = database_url
    first = Store(url)
    add(first, "7")
    with first.engine.begin() as conn:
        conn.execute(text("DELETE FROM schema_version"))
    again = Store(url)
    assert again.schema_version == len(MIGRATIONS)
    assert [row.job_id for row in again.call(repo.history)] == ["7"]


def test_env_var_values_stored_by_earlier_versions_are_blanked(database_url: str) -> None:
    url = database_url
    old = Store(url)
    definition = JobDefinition(name="a", command="true", environment={"env_vars": {"TOKEN": "s3cret", "N": "1"}})
    job = runs.NewJob(name="a", dependencies=[], definition=definition, retry=0, retry_delay=5)
    old.call(
        runs.insert_run,
        runs.NewRun("wf", "/wf.yaml", {}, {}, "local", None, [], [job]),
        run_id="r",
        status="running",
        triggered_by="cli",
    )
    with old.engine.begin() as conn:  # what version 5 wrote, and its version row
        conn.execute(text("UPDATE workflow_run_job SET definition = :d"), {"d": definition.model_dump_json()})
        conn.execute(text("UPDATE schema_version SET version = 5"))
    old.close()
    store = Store(url)
    assert store.schema_version == len(MIGRATIONS)
    snap = store.call(runs.snapshot, "r")
    assert snap is not None
    assert JobDefinition.model_validate_json(snap.jobs[0].definition).environment.env_vars == {"TOKEN": "", "N": ""}


def test_a_bad_database_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="SVC_DATABASE_URL is not a database URL"):
        Store("not a url")
    with pytest.raises(ConfigError, match="SQLite or PostgreSQL, not 'mysql'"):
        Store("mysql://svc@127.0.0.1/svc")


def test_submission_records_resources_and_env_names_but_no_values(store: Store) -> None:
    add(store, "7")
    row = store.call(repo.find_job, "local", "7")
    assert row is not None
    assert (row.state, row.gpus, row.partition, row.source) == ("PENDING", 4, "gpu", "cli")
    assert row.env_var_names == '["WANDB_API_KEY"]'
    assert row.submitted_at.tzinfo is not None


def test_statuses_record_transitions_and_missing_jobs_stay_put(store: Store) -> None:
    add(store, "1")
    add(store, "2")
    running = JobStatus(job_id="1", state=JobState.RUNNING, raw_state="RUNNING", elapsed_seconds=5)
    changes = store.call(repo.apply_statuses, "local", {"1": running})
    assert [(c.job_id, c.from_state, c.to_state) for c in changes] == [("1", "PENDING", "RUNNING")]
    assert store.call(repo.find_job, "local", "2").state == "PENDING"  # not reported: unchanged
    assert store.call(repo.apply_statuses, "local", {"1": running}) == []  # no change, no transition
    failed = JobStatus(job_id="1", state=JobState.FAILED, raw_state="FAILED", exit_code=3, elapsed_seconds=9)
    store.call(repo.apply_statuses, "local", {"1": failed})
    row = store.call(repo.find_job, "local", "1")
    assert (row.state, row.exit_code, row.elapsed_seconds) == ("FAILED", 3, 9)
    assert row.started_at is not None
    assert row.ended_at is not None
    steps = [(t.from_state, t.to_state) for t in store.call(repo.transitions, row.id)]
    assert steps == [(None, "PENDING"), ("PENDING", "RUNNING"), ("RUNNING", "FAILED")]
    assert [r.job_id for r in store.call(repo.live_jobs, "local")] == ["2"]


def test_the_queues_time_limit_stays_when_accounting_has_none_to_give(store: Store) -> None:
    """sacct read a moment after a cancel may have no limit to say; the one squeue showed must not be lost (the job
    page then showed Time limit "—" for a 5-minute job)."""
    add(store, "1")
    running = JobStatus(job_id="1", state=JobState.RUNNING, raw_state="RUNNING", time_limit="00:05:00")
    store.call(repo.apply_statuses, "local", {"1": running})
    cancelled = JobStatus(job_id="1", state=JobState.CANCELLED, raw_state="CANCELLED by 0", elapsed_seconds=1)
    store.call(repo.apply_statuses, "local", {"1": cancelled})
    silent = JobUsage(job_id="1", cpus=1, mem_bytes=1024, elapsed_seconds=1, cpu_seconds=0.0, time_limit_seconds=None)
    assert store.call(repo.record_usages, "local", {"1": silent}) == 1
    assert store.call(repo.find_job, "local", "1").time_limit_seconds == 300
    add(store, "2")
    store.call(repo.apply_statuses, "local", {"2": cancelled.model_copy(update={"job_id": "2"})})
    told = JobUsage(job_id="2", cpus=1, mem_bytes=1024, elapsed_seconds=1, cpu_seconds=0.0, time_limit_seconds=600)
    store.call(repo.record_usages, "local", {"2": told})
    assert store.call(repo.find_job, "local", "2").time_limit_seconds == 600  # accounting's, when it has one


def test_a_job_without_a_limit_reads_unlimited_once_it_ended(store: Store) -> None:
    """An UNLIMITED job (squeue's word while it runs) is stored as Slurm's 0, so the ended job's detail still says
    UNLIMITED instead of an unknown limit ("—" on the job page)."""
    from svc_host.services.jobs import status_of

    add(store, "1")
    running = JobStatus(job_id="1", state=JobState.RUNNING, raw_state="RUNNING", time_limit="UNLIMITED")
    store.call(repo.apply_statuses, "local", {"1": running})
    done = JobStatus(job_id="1", state=JobState.COMPLETED, raw_state="COMPLETED", exit_code=0)
    store.call(repo.apply_statuses, "local", {"1": done})
    record = store.call(repo.find_job, "local", "1")
    assert record.time_limit_seconds == 0
    assert status_of(record).time_limit == "UNLIMITED"
    add(store, "2")  # started by backfill: Slurm's 365 days for "no limit" (seen in the stress check)
    backfilled = running.model_copy(update={"job_id": "2", "time_limit": "365-00:00:00"})
    store.call(repo.apply_statuses, "local", {"2": backfilled})
    assert status_of(store.call(repo.find_job, "local", "2")).time_limit == "UNLIMITED"


def test_history_is_newest_first_and_filters(store: Store) -> None:
    for job_id, source in (("1", "cli"), ("2", "web"), ("3", "mcp")):
        add(store, job_id, source=source)
    assert [r.job_id for r in store.call(repo.history)] == ["3", "2", "1"]
    assert [r.job_id for r in store.call(repo.history, limit=1, offset=1)] == ["2"]
    assert [r.job_id for r in store.call(repo.history, source="web")] == ["2"]


def test_integers_are_64_bit_on_every_database(store: Store) -> None:
    """SQLite's integers are 64-bit; PostgreSQL's columns are BIGINT, so a value past 2**31 is kept as is."""
    add(store, "1")
    huge = JobStatus(job_id="1", state=JobState.RUNNING, raw_state="RUNNING", elapsed_seconds=2**40)
    store.call(repo.apply_statuses, "local", {"1": huge})
    row = store.call(repo.find_job, "local", "1")
    assert row is not None
    assert row.elapsed_seconds == 2**40


def test_stats_count_outcomes_in_the_window(store: Store) -> None:
    now = datetime.now(UTC)
    add(store, "1", when=now - timedelta(days=3))
    for job_id in ("2", "3", "4", "5"):
        add(store, job_id, when=now)
    outcomes = {
        "2": JobStatus(job_id="2", state=JobState.COMPLETED, raw_state="COMPLETED", elapsed_seconds=10),
        "3": JobStatus(job_id="3", state=JobState.TIMEOUT, raw_state="TIMEOUT", elapsed_seconds=30),
        "4": JobStatus(job_id="4", state=JobState.CANCELLED, raw_state="CANCELLED by 0", elapsed_seconds=2),
    }
    store.call(repo.apply_statuses, "local", outcomes)
    stats = store.call(repo.history_stats, since=now - timedelta(hours=1))
    unmeasured = {"jobs": 3, "measured": 0, "flagged": 0, "gpu_hours": 0.0}
    unmeasured |= {"cpu_percent": None, "memory_percent": None, "time_percent": None}
    expected = {"total": 4, "completed": 1, "failed": 1, "cancelled": 1, "avg_runtime_seconds": 14.0}
    assert stats == expected | {"efficiency": unmeasured}
    assert store.call(repo.history_stats)["total"] == 5


def test_mean_runtime_is_over_the_jobs_whose_runtime_is_known(store: Store) -> None:
    for job_id in ("1", "2", "3"):
        add(store, job_id)
    outcomes = {
        "1": JobStatus(job_id="1", state=JobState.COMPLETED, raw_state="COMPLETED", elapsed_seconds=10),
        "2": JobStatus(job_id="2", state=JobState.COMPLETED, raw_state="COMPLETED"),  # e.g. lost: no runtime
        "3": JobStatus(job_id="3", state=JobState.FAILED, raw_state="FAILED", elapsed_seconds=40),
    }
    store.call(repo.apply_statuses, "local", outcomes)
    assert store.call(repo.history_stats)["avg_runtime_seconds"] == 25.0


def test_accounting_times_replace_when_a_tick_saw_the_job(store: Store) -> None:
    add(store, "1")
    add(store, "2")
    seen = datetime(2026, 11, 23, 12, 0, 10, tzinfo=UTC)
    store.call(
        repo.apply_statuses,
        "local",
        {"2": JobStatus(job_id="2", state=JobState.RUNNING, raw_state="RUNNING")},
        now=seen,
    )
    start, end = datetime(2026, 11, 23, 12, 0, 1, tzinfo=UTC), datetime(2026, 11, 23, 12, 0, 4, tzinfo=UTC)
    ended = {
        job_id: JobStatus(
            job_id=job_id,
            state=JobState.COMPLETED,
            raw_state="COMPLETED",
            elapsed_seconds=3,
            started_at=start,
            ended_at=end,
        )
        for job_id in ("1", "2")
    }
    store.call(repo.apply_statuses, "local", ended, now=seen + timedelta(seconds=20))
    for record in store.call(repo.history):  # "1" was never seen running; "2" was seen 9 s late
        assert (as_utc(record.started_at), as_utc(record.ended_at), record.elapsed_seconds) == (start, end, 3)


class _RaceOnFirstRead(dict[str, JobStatus]):
    """Statuses that, the first time ``apply_statuses`` asks for one (its live jobs already read), let a second
    writer apply the same statuses in another thread before answering."""

    def __init__(self, statuses: dict[str, JobStatus], rival: threading.Thread) -> None:
        super().__init__(statuses)
        self.rival = rival
        self.raced = False

    def get(self, key: str, default: JobStatus | None = None) -> JobStatus | None:  # type: ignore[override]
        if not self.raced:
            self.raced = True
            self.rival.start()
            self.rival.join(timeout=2)  # on PostgreSQL the rival waits for this transaction's row locks: go on
        return super().get(key, default)


def test_a_change_two_writers_apply_at_once_is_recorded_once(store: Store) -> None:
    """A second monitor (or a status refresh) applies the same end between the first one's read and its write:
    the job gets one transition and counts once in the history's totals."""
    add(store, "1")
    ended = {"1": JobStatus(job_id="1", state=JobState.COMPLETED, raw_state="COMPLETED", elapsed_seconds=4)}
    rival = threading.Thread(target=store.call, args=(repo.apply_statuses, "local", dict(ended)))
    statuses = _RaceOnFirstRead(ended, rival)
    store.call(repo.apply_statuses, "local", statuses)
    rival.join(timeout=30)
    assert statuses.raced
    assert not rival.is_alive()
    row = store.call(repo.find_job, "local", "1")
    steps = [(t.from_state, t.to_state) for t in store.call(repo.transitions, row.id)]
    assert steps == [(None, "PENDING"), ("PENDING", "COMPLETED")]
    stats = store.call(repo.history_stats)
    assert (stats["total"], stats["completed"], stats["failed"]) == (1, 1, 0)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_on_sqlite_a_function_that_lost_a_race_begins_with_the_write_lock_from_then_on(database_url: str) -> None:
    """Its first race costs it a second run; in the next race the rival waits for it instead."""
    store = Store(database_url)
    add(store, "1")
    runs: list[str] = []

    def rename(session: Session, tag: str, rival: threading.Thread | None, wait: float) -> None:
        runs.append(tag)
        name = session.execute(text("SELECT name FROM job WHERE job_id = '1'")).scalar_one()
        if rival is not None and not rival.is_alive() and rival.ident is None:
            rival.start()
            rival.join(timeout=wait)
        session.execute(text("UPDATE job SET name = :name WHERE job_id = '1'"), {"name": f"{name}+{tag}"})

    # first race: only a read is held, so the rival's write goes through (awaited however slow the machine);
    # second: with the write lock held the rival can only wait, so its second is a pause it spends blocked
    for first, second, wait in (("a", "b", DEADLINE), ("c", "d", 1.0)):
        rival = threading.Thread(target=store.call, args=(rename, second, None, 0.0))
        store.call(rename, first, rival, wait)
        rival.join(timeout=DEADLINE)
    assert runs == ["a", "b", "a", "c", "d"]  # "a" ran again after "b" won; "c" held the lock, "d" waited
    assert store.call(repo.find_job, "local", "1").name == "j+b+a+c+d"
    store.close()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_transaction_postgresql_aborts_in_a_deadlock_is_run_again(database_url: str) -> None:
    """Two transactions lock two jobs in opposite orders: PostgreSQL aborts one, which ``Store.call`` runs again,
    so both writes land. (SQLite's one write lock makes such transactions wait in turn instead.)"""
    store = Store(database_url)
    add(store, "1")
    add(store, "2")
    both_hold_one = threading.Barrier(2)
    attempts: Counter[str] = Counter()

    def lock_in_order(session: Session, first: str, second: str) -> None:
        attempts[first] += 1
        rename = text("UPDATE job SET name = name || :tag WHERE job_id = :job_id")
        session.execute(rename, {"tag": f"+{first}", "job_id": first})
        if attempts[first] == 1:
            both_hold_one.wait(timeout=30)
        session.execute(rename, {"tag": f"+{first}", "job_id": second})

    with ThreadPoolExecutor(2) as pool:
        done = [pool.submit(store.call, lock_in_order, a, b) for a, b in (("1", "2"), ("2", "1"))]
        for future in done:
            future.result(timeout=60)
    assert sorted(attempts.values()) == [1, 2]  # the deadlock's victim ran again, once
    names = {row.job_id: row.name for row in store.call(repo.history)}
    assert {job_id: sorted(name.split("+")[1:]) for job_id, name in names.items()} == {"1": ["1", "2"], "2": ["1", "2"]}
    store.close()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_postgresql_url_keeps_its_options_and_the_session_runs_in_utc(database_url: str) -> None:
    """The URL's ``options`` (here the test's own schema) reach the server along with ``timezone=UTC``, so a time
    written in any zone reads back as the same moment."""
    schema = database_url.rsplit("search_path%3D", 1)[1]
    store = Store(database_url)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT current_schema(), current_setting('TimeZone')")).one() == (schema, "UTC")
    berlin = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=1)))
    add(store, "1", when=berlin)
    row = store.call(repo.find_job, "local", "1")
    assert row is not None
    assert as_utc(row.submitted_at) == datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
    store.close()


def test_a_job_is_known_by_its_cluster_and_its_id(store: Store) -> None:
    """Two clusters number their jobs alike: each lookup, live list and history filter keeps them apart."""
    for transport, name in (("local", "prep"), ("lab22", "train")):
        store.call(repo.add_job, transport=transport, job_id="68", name=name, source="web", resources={}, command=[])
    assert store.call(repo.find_job, "lab22", "68").name == "train"
    assert store.call(repo.find_job, "local", "68").name == "prep"
    failed = JobStatus(job_id="68", state=JobState.FAILED, raw_state="FAILED", exit_code=1)
    store.call(repo.apply_statuses, "lab22", {"68": failed})
    assert store.call(repo.find_job, "local", "68").state == "PENDING"
    assert [row.name for row in store.call(repo.history, transport="lab22")] == ["train"]
    indexes = {tuple(index["column_names"]) for index in inspect(store.engine).get_indexes("job")}
    assert ("transport", "job_id") in indexes
