"""Ordered schema migrations. A database made by any earlier version is upgraded in place on open.

Each migration is plain DDL frozen at the time it was written (never generated from today's models), or a
function of the connection for what SQL alone cannot say portably (a data fix), and ``schema_version`` records
how many have run. Append new migrations; never change what an old one creates.

A migration may be cut short (a kill, a full disk) and must then run again cleanly, so:

* each one runs in its own transaction together with the write of its version row; on SQLite that transaction
  is opened with ``BEGIN IMMEDIATE`` (the driver would otherwise run DDL outside any transaction, committed at
  once), which also makes processes opening one database at the same time migrate one after the other;
* every statement is safe to repeat (``CREATE TABLE IF NOT EXISTS``, ``CREATE INDEX IF NOT EXISTS``), which
  also repairs a database an earlier svc left with tables but no version row. ``ALTER TABLE ... ADD COLUMN``
  has no such form in SQLite: write it as a function that checks for the column first. Functions must be as
  safe to repeat.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlalchemy import Connection, Engine, inspect, text


def _add_sweep_array_job_id(conn: Connection) -> None:
    """The Slurm job array a sweep's cells were submitted as (``None``: one submission per cell)."""
    if "array_job_id" not in {column["name"] for column in inspect(conn).get_columns("sweep_run")}:
        conn.execute(text("ALTER TABLE sweep_run ADD COLUMN array_job_id VARCHAR"))


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
            job_pk INTEGER NOT NULL REFERENCES job (id),
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
)


def migrate(engine: Engine) -> int:
    """Run every migration the database has not seen, each in its own transaction; returns the version."""
    with engine.connect() as conn:
        version = _locked_version(conn)
        while version < len(MIGRATIONS):
            for step in MIGRATIONS[version]:
                if isinstance(step, str):
                    conn.execute(text(step))
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
    """Open a transaction (holding SQLite's write lock) and read the version in it."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    conn.execute(text("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"))
    found = conn.execute(text("SELECT max(version) FROM schema_version")).scalar()
    return int(found) if found is not None else 0
