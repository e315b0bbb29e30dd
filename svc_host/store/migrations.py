"""Ordered schema migrations. A database made by any earlier version is upgraded in place on open.

Each migration is plain DDL frozen at the time it was written (never generated from today's models), or a
function of the connection for what SQL alone cannot say portably (a data fix), and ``schema_version`` records
how many have run. Append new migrations; never change what an old one creates.

A migration may be cut short (a kill, a full disk) and must then run again cleanly, so:

* each one runs in its own transaction together with the write of its version row; on SQLite that transaction
  is opened with ``BEGIN IMMEDIATE`` (``sqlite_immediate``, see :mod:`svc_host.store.database`), which also
  makes processes opening one database at the same time migrate one after the other;
* on PostgreSQL the transaction first takes an advisory lock per schema, so processes opening one database at
  the same time migrate one after the other there too;
* every statement is safe to repeat (``CREATE TABLE IF NOT EXISTS``, ``CREATE INDEX IF NOT EXISTS``), which
  also repairs a database an earlier svc left with tables but no version row. ``ALTER TABLE ... ADD COLUMN``
  has no such form in SQLite: write it as a function that checks for the column first. Functions must be as
  safe to repeat.

The DDL is written once, in SQLite's words, and ``for_dialect`` says it in PostgreSQL's: there ``INTEGER`` is
``BIGINT`` (SQLite's integers are 64-bit) and ``BIGINT PRIMARY KEY`` an identity column (SQLite's rowid alias).
Functions run on both: they check for a column with ``sqlalchemy.inspect``, never ``PRAGMA table_info``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from sqlalchemy import Connection, Engine, inspect, select, text


def _add_sweep_array_job_id(conn: Connection) -> None:
    """The Slurm job array a sweep's cells were submitted as (``None``: one submission per cell)."""
    if "array_job_id" not in {column["name"] for column in inspect(conn).get_columns("sweep_run")}:
        conn.execute(text("ALTER TABLE sweep_run ADD COLUMN array_job_id VARCHAR"))


def _add_retry_columns(conn: Connection) -> None:
    """Retries by end state: each job row's rules and interruption budget, the nodes its next attempt avoids;
    the node list of every job (an attempt's node, for ``--exclude`` and for the run's attempts)."""
    added = {
        "workflow_run_job": (
            ("retry_policy", "VARCHAR NOT NULL DEFAULT '{}'"),
            ("interruptions_left", "INTEGER NOT NULL DEFAULT 0"),
            ("exclude_nodes", "VARCHAR"),
        ),
        "job": (("node_list", "VARCHAR"),),
    }
    for table, columns in added.items():
        present = {column["name"] for column in inspect(conn).get_columns(table)}
        for name, ddl in columns:
            if name not in present:
                conn.execute(text(for_dialect(f"ALTER TABLE {table} ADD COLUMN {name} {ddl}", conn.dialect.name)))


def _add_sweep_steering(conn: Connection) -> None:
    """A sweep's failure budget, its pause and the count of its cells held while paused."""
    have = {column["name"] for column in inspect(conn).get_columns("sweep_run")}
    for name, ddl in (
        ("max_failures", "INTEGER"),
        ("paused_at", "TIMESTAMP"),
        ("cells_held", "INTEGER NOT NULL DEFAULT 0"),
    ):
        if name not in have:
            conn.execute(text(for_dialect(f"ALTER TABLE sweep_run ADD COLUMN {name} {ddl}", conn.dialect.name)))


_USAGE_COLUMNS = (
    ("alloc_cpus", "INTEGER"),
    ("mem_bytes", "INTEGER"),
    ("max_rss_bytes", "INTEGER"),
    ("cpu_time_ms", "INTEGER"),
    ("time_limit_seconds", "INTEGER"),
    ("gpu_util_percent", "INTEGER"),
    ("usage_at", "TIMESTAMP"),
)


def _add_job_usage(conn: Connection) -> None:
    """What each finished job was given and used, from accounting (the columns efficiency reads)."""
    present = {column["name"] for column in inspect(conn).get_columns("job")}
    for name, kind in _USAGE_COLUMNS:
        if name not in present:
            conn.execute(text(for_dialect(f"ALTER TABLE job ADD COLUMN {name} {kind}", conn.dialect.name)))


def backfill_job_day_stats(conn: Connection) -> None:
    """Count every stored job into ``job_day_stats`` from scratch (jobs stored before it had no usage yet)."""
    day = "substr(submitted_at, 1, 10)" if conn.dialect.name == "sqlite" else "to_char(submitted_at, 'YYYY-MM-DD')"
    terminal = "state NOT IN ('PENDING', 'RUNNING', 'SUSPENDED', 'UNKNOWN')"
    conn.execute(text("DELETE FROM job_day_stats"))
    conn.execute(
        text(
            "INSERT INTO job_day_stats (day, state, jobs, elapsed_sum, elapsed_n, measured, flagged, cpu_used_ms, "  # noqa: S608 - no outside value
            "cpu_given_ms, mem_peak_bytes, mem_given_bytes, time_used_seconds, time_given_seconds, gpu_seconds) "
            f"SELECT {day}, state, count(*), "
            f"coalesce(sum(CASE WHEN {terminal} THEN elapsed_seconds END), 0), "
            f"count(CASE WHEN {terminal} THEN elapsed_seconds END), 0, 0, 0, 0, 0, 0, 0, 0, 0 "
            f"FROM job GROUP BY {day}, state"
        )
    )


_DAY_STATS_INPUTS = (
    "transport",
    "job_id",
    "state",
    "submitted_at",
    "elapsed_seconds",
    "gpus",
    "alloc_cpus",
    "mem_bytes",
    "max_rss_bytes",
    "cpu_time_ms",
    "time_limit_seconds",
    "gpu_util_percent",
    "usage_at",
)
"""The job columns (all present since version 11) a job's contribution to the per-cluster counters is made of."""


def backfill_cluster_day_stats(conn: Connection) -> None:
    """Count every stored job into ``job_cluster_day_stats`` from scratch, usage included: the same sums as every
    later write adds (``day_stats.contribution``), read from the job rows in their columns' types."""
    from svc_host.store.day_stats import DayStatsDelta  # the one definition of what a job adds to the counters
    from svc_host.store.tables import JobRecord

    job = JobRecord.__table__  # type: ignore[attr-defined]  # SQLModel declares it on table models only
    delta = DayStatsDelta()
    for row in conn.execute(select(*(job.c[name] for name in _DAY_STATS_INPUTS))):
        delta.after(JobRecord(**dict(row._mapping)))
    conn.execute(text("DELETE FROM job_cluster_day_stats"))
    delta.apply_to(conn)


_INTEGER = re.compile(r"\bINTEGER\b")
_ROWID = re.compile(r"\bBIGINT PRIMARY KEY\b")


def for_dialect(ddl: str, dialect: str) -> str:
    """A migration's DDL (written for SQLite) as ``dialect`` (``sqlite`` or ``postgresql``) runs it."""
    if dialect != "postgresql":
        return ddl
    return _ROWID.sub("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", _INTEGER.sub("BIGINT", ddl))


def _forget_env_values(conn: Connection) -> None:
    """Blank the environment variable values that versions before 6 stored with workflow jobs (names stay)."""
    for row_id, definition in conn.execute(text("SELECT id, definition FROM workflow_run_job")).all():
        data = json.loads(definition)
        env_vars = (data.get("environment") or {}).get("env_vars") or {}
        if any(value != "" for value in env_vars.values()):
            data["environment"]["env_vars"] = dict.fromkeys(env_vars, "")
            update = text("UPDATE workflow_run_job SET definition = :definition WHERE id = :id")
            conn.execute(update, {"definition": json.dumps(data), "id": row_id})


Step = str | Callable[[Connection], None]
MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    # 1: jobs and their state transitions
    (
        """CREATE TABLE IF NOT EXISTS job (
            id INTEGER PRIMARY KEY,
            transport VARCHAR NOT NULL,
            job_id VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            state VARCHAR NOT NULL,
            raw_state VARCHAR NOT NULL,
            exit_code INTEGER,
            partition VARCHAR,
            nodes INTEGER,
            gpus INTEGER,
            resources VARCHAR NOT NULL,
            command VARCHAR NOT NULL,
            env_var_names VARCHAR NOT NULL,
            work_dir VARCHAR,
            stdout_path VARCHAR,
            stderr_path VARCHAR,
            submitted_at TIMESTAMP NOT NULL,
            started_at TIMESTAMP,
            ended_at TIMESTAMP,
            updated_at TIMESTAMP NOT NULL,
            elapsed_seconds INTEGER
        )""",
        "CREATE INDEX IF NOT EXISTS ix_job_transport ON job (transport)",
        "CREATE INDEX IF NOT EXISTS ix_job_job_id ON job (job_id)",
        "CREATE INDEX IF NOT EXISTS ix_job_state ON job (state)",
        """CREATE TABLE IF NOT EXISTS job_transition (
            id INTEGER PRIMARY KEY,
            job_pk INTEGER NOT NULL,
            from_state VARCHAR,
            to_state VARCHAR NOT NULL,
            raw_state VARCHAR NOT NULL,
            at TIMESTAMP NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS ix_job_transition_job_pk ON job_transition (job_pk)",
    ),
    # 2: workflow runs and their jobs
    (
        """CREATE TABLE IF NOT EXISTS workflow_run (
            id VARCHAR NOT NULL PRIMARY KEY,
            workflow_name VARCHAR NOT NULL,
            yaml_path VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            started_at TIMESTAMP NOT NULL,
            completed_at TIMESTAMP,
            updated_at TIMESTAMP NOT NULL,
            error VARCHAR,
            args VARCHAR NOT NULL,
            selection VARCHAR NOT NULL,
            transport VARCHAR NOT NULL,
            mount VARCHAR,
            sync_mounts VARCHAR NOT NULL,
            triggered_by VARCHAR NOT NULL,
            sweep_id INTEGER,
            owner VARCHAR,
            lease_until TIMESTAMP
        )""",
        "CREATE INDEX IF NOT EXISTS ix_workflow_run_workflow_name ON workflow_run (workflow_name)",
        "CREATE INDEX IF NOT EXISTS ix_workflow_run_status ON workflow_run (status)",
        "CREATE INDEX IF NOT EXISTS ix_workflow_run_sweep_id ON workflow_run (sweep_id)",
        """CREATE TABLE IF NOT EXISTS workflow_run_job (
            id INTEGER PRIMARY KEY,
            run_id VARCHAR NOT NULL REFERENCES workflow_run (id),
            name VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            depends_on VARCHAR NOT NULL,
            definition VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            job_id VARCHAR,
            job_pk INTEGER,
            job_ids VARCHAR NOT NULL,
            attempt INTEGER NOT NULL,
            retries_left INTEGER NOT NULL,
            retry_delay INTEGER NOT NULL,
            next_retry_at TIMESTAMP,
            submitting_since TIMESTAMP,
            error VARCHAR,
            updated_at TIMESTAMP NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS ix_workflow_run_job_run_id ON workflow_run_job (run_id)",
        "CREATE INDEX IF NOT EXISTS ix_workflow_run_job_job_id ON workflow_run_job (job_id)",
    ),
    # 3: sweeps (their cells are workflow runs with sweep_id; the cell counters are recounted by status)
    (
        """CREATE TABLE IF NOT EXISTS sweep_run (
            id INTEGER PRIMARY KEY,
            name VARCHAR NOT NULL,
            workflow_yaml_path VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            matrix VARCHAR NOT NULL,
            args VARCHAR NOT NULL,
            fail_fast BOOLEAN NOT NULL,
            max_parallel INTEGER NOT NULL,
            cell_count INTEGER NOT NULL,
            cells_pending INTEGER NOT NULL,
            cells_running INTEGER NOT NULL,
            cells_completed INTEGER NOT NULL,
            cells_failed INTEGER NOT NULL,
            cells_cancelled INTEGER NOT NULL,
            submission_source VARCHAR NOT NULL,
            transport VARCHAR NOT NULL,
            started_at TIMESTAMP NOT NULL,
            completed_at TIMESTAMP,
            cancel_requested_at TIMESTAMP,
            updated_at TIMESTAMP NOT NULL,
            error VARCHAR,
            owner VARCHAR,
            lease_until TIMESTAMP
        )""",
        "CREATE INDEX IF NOT EXISTS ix_sweep_run_status ON sweep_run (status)",
        "CREATE INDEX IF NOT EXISTS ix_sweep_run_started_at ON sweep_run (started_at)",
        "CREATE INDEX IF NOT EXISTS ix_workflow_run_sweep_status ON workflow_run (sweep_id, status)",
    ),
    # 4: GPU use per partition over time (the dashboard's resource history; pruned by age and row count)
    (
        """CREATE TABLE IF NOT EXISTS resource_sample (
            id INTEGER PRIMARY KEY,
            transport VARCHAR NOT NULL,
            partition VARCHAR NOT NULL,
            at TIMESTAMP NOT NULL,
            total_gpus INTEGER NOT NULL,
            gpus_in_use INTEGER NOT NULL,
            jobs_running INTEGER NOT NULL,
            nodes_total INTEGER NOT NULL,
            nodes_idle INTEGER NOT NULL,
            nodes_down INTEGER NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS ix_resource_sample_at ON resource_sample (at)",
        "CREATE INDEX IF NOT EXISTS ix_resource_sample_transport_at ON resource_sample (transport, at)",
    ),
    # 5: scheduled workflow runs (svc_host/schedules)
    (
        """CREATE TABLE IF NOT EXISTS schedule (
            id INTEGER PRIMARY KEY,
            name VARCHAR NOT NULL UNIQUE,
            spec VARCHAR NOT NULL,
            enabled BOOLEAN NOT NULL,
            version INTEGER NOT NULL,
            next_fire_at TIMESTAMP,
            last_fire_at TIMESTAMP,
            last_outcome VARCHAR,
            last_error VARCHAR,
            last_run_id VARCHAR,
            last_sweep_id INTEGER,
            fire_count INTEGER NOT NULL,
            created_at TIMESTAMP NOT NULL,
            updated_at TIMESTAMP NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS ix_schedule_next_fire_at ON schedule (next_fire_at)",
    ),
    # 6: values of environment variables are never stored (the engine reads them when it submits)
    (_forget_env_values,),
    # 7: a sweep submitted as one Slurm job array records the array's job id
    (_add_sweep_array_job_id,),
    # 8: history statistics over millions of jobs read an index, never the wide job rows. A date range seeks
    # each state's slice of (state, submitted_at) and reads the rows already grouped by state (no sort); all of
    # history scans the narrower (state, elapsed_seconds).
    (
        "CREATE INDEX IF NOT EXISTS ix_job_state_submitted_elapsed ON job (state, submitted_at, elapsed_seconds)",
        "CREATE INDEX IF NOT EXISTS ix_job_state_elapsed ON job (state, elapsed_seconds)",
    ),
    # 9: retries by end state: every attempt of a workflow job and why it was followed by another (or by none)
    (
        _add_retry_columns,
        """CREATE TABLE IF NOT EXISTS workflow_run_attempt (
            id INTEGER PRIMARY KEY,
            run_job_id INTEGER NOT NULL REFERENCES workflow_run_job (id),
            attempt INTEGER NOT NULL,
            job_pk INTEGER NOT NULL,
            reason VARCHAR
        )""",
        "CREATE UNIQUE INDEX IF NOT EXISTS ix_workflow_run_attempt_job ON workflow_run_attempt (run_job_id, attempt)",
    ),
    # 10: sweeps people steer: a failure budget, a pause that survives restarts, and how many cells it holds
    (_add_sweep_steering,),
    # 11: efficiency (each finished job's usage from accounting) and per-day history counters, so all-time
    # statistics add up a few hundred day rows instead of scanning every job
    (
        _add_job_usage,
        """CREATE TABLE IF NOT EXISTS job_day_stats (
            day VARCHAR NOT NULL,
            state VARCHAR NOT NULL,
            jobs INTEGER NOT NULL,
            elapsed_sum INTEGER NOT NULL,
            elapsed_n INTEGER NOT NULL,
            measured INTEGER NOT NULL,
            flagged INTEGER NOT NULL,
            cpu_used_ms INTEGER NOT NULL,
            cpu_given_ms INTEGER NOT NULL,
            mem_peak_bytes INTEGER NOT NULL,
            mem_given_bytes INTEGER NOT NULL,
            time_used_seconds INTEGER NOT NULL,
            time_given_seconds INTEGER NOT NULL,
            gpu_seconds INTEGER NOT NULL,
            PRIMARY KEY (day, state)
        )""",
        "CREATE INDEX IF NOT EXISTS ix_job_ended_at ON job (ended_at)",
        backfill_job_day_stats,
    ),
    # 12: the dashboard's logins: sessions and one-time login codes, kept by a keyed hash, never in clear
    (
        """CREATE TABLE IF NOT EXISTS web_secret (
            key VARCHAR NOT NULL PRIMARY KEY,
            kind VARCHAR NOT NULL,
            expires_at INTEGER NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS ix_web_secret_expires_at ON web_secret (expires_at)",
    ),
    # 13: a job is known by its cluster and its id (clusters number their jobs independently): one index answers
    # every lookup by both
    ("CREATE INDEX IF NOT EXISTS ix_job_transport_job_id ON job (transport, job_id)",),
    # 14: the per-day history counters split by cluster, so one cluster's statistics read counters too (the
    # counters of every cluster are their sum)
    (
        """CREATE TABLE IF NOT EXISTS job_cluster_day_stats (
            day VARCHAR NOT NULL,
            transport VARCHAR NOT NULL,
            state VARCHAR NOT NULL,
            jobs INTEGER NOT NULL,
            elapsed_sum INTEGER NOT NULL,
            elapsed_n INTEGER NOT NULL,
            measured INTEGER NOT NULL,
            flagged INTEGER NOT NULL,
            cpu_used_ms INTEGER NOT NULL,
            cpu_given_ms INTEGER NOT NULL,
            mem_peak_bytes INTEGER NOT NULL,
            mem_given_bytes INTEGER NOT NULL,
            time_used_seconds INTEGER NOT NULL,
            time_given_seconds INTEGER NOT NULL,
            gpu_seconds INTEGER NOT NULL,
            PRIMARY KEY (day, transport, state)
        )""",
        backfill_cluster_day_stats,
        "DROP TABLE IF EXISTS job_day_stats",
    ),
    # 15: interactive sessions (svc_host/sessions): one row per session job, keyed like jobs by cluster and id; the
    # open ones are read by state on every watch tick
    (
        """CREATE TABLE IF NOT EXISTS interactive_session (
            cluster VARCHAR NOT NULL,
            job_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            fields VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            state VARCHAR NOT NULL,
            end_reason VARCHAR,
            end_detail VARCHAR,
            session_dir VARCHAR NOT NULL,
            node_host VARCHAR,
            node_port INTEGER,
            created_at TIMESTAMP NOT NULL,
            started_at TIMESTAMP,
            ready_at TIMESTAMP,
            ended_at TIMESTAMP,
            time_limit_seconds INTEGER,
            start_timeout_seconds INTEGER NOT NULL,
            idle_minutes INTEGER,
            last_activity TIMESTAMP,
            idle_warned_at TIMESTAMP,
            stop_requested_at TIMESTAMP,
            updated_at TIMESTAMP NOT NULL,
            PRIMARY KEY (cluster, job_id)
        )""",
        "CREATE INDEX IF NOT EXISTS ix_interactive_session_state ON interactive_session (state)",
    ),
)


def migrate(engine: Engine) -> int:
    """Run every migration the database has not seen, each in its own transaction; returns the version."""
    with engine.connect() as conn:
        conn.execution_options(sqlite_immediate=True)  # each transaction holds SQLite's write lock
        version = _locked_version(conn)
        while version < len(MIGRATIONS):
            for step in MIGRATIONS[version]:
                if isinstance(step, str):
                    conn.execute(text(for_dialect(step, conn.dialect.name)))
                else:
                    step(conn)
            version += 1
            conn.execute(text("DELETE FROM schema_version"))
            conn.execute(text("INSERT INTO schema_version (version) VALUES (:v)"), {"v": version})
            conn.commit()
            version = _locked_version(conn)
        conn.commit()
    return version


def _locked_version(conn: Connection) -> int:
    """Open a transaction (holding SQLite's write lock, or PostgreSQL's migration lock of the connection's schema)
    and read the version in it."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('svc migrations ' || current_schema()))"))
    conn.execute(text("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"))
    found = conn.execute(text("SELECT max(version) FROM schema_version")).scalar()
    return int(found) if found is not None else 0
