"""Ordered schema migrations. A database made by any earlier version is upgraded in place on open.

Each migration is plain DDL frozen at the time it was written (never generated from today's models), and
``schema_version`` records how many have run. Append new migrations; never edit an old one.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: jobs and their state transitions
    (
        """CREATE TABLE job (
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
        "CREATE INDEX ix_job_transport ON job (transport)",
        "CREATE INDEX ix_job_job_id ON job (job_id)",
        "CREATE INDEX ix_job_state ON job (state)",
        """CREATE TABLE job_transition (
            id INTEGER PRIMARY KEY,
            job_pk INTEGER NOT NULL REFERENCES job (id),
            from_state VARCHAR,
            to_state VARCHAR NOT NULL,
            raw_state VARCHAR NOT NULL,
            at TIMESTAMP NOT NULL
        )""",
        "CREATE INDEX ix_job_transition_job_pk ON job_transition (job_pk)",
    ),
)


def current_version(conn: Connection) -> int:
    conn.execute(text("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"))
    row = conn.execute(text("SELECT version FROM schema_version")).first()
    return int(row[0]) if row else 0


def migrate(conn: Connection) -> int:
    """Run every migration the database has not seen, in one transaction; returns the new version."""
    version = current_version(conn)
    for statements in MIGRATIONS[version:]:
        for statement in statements:
            conn.execute(text(statement))
    if version == 0:
        conn.execute(text("INSERT INTO schema_version (version) VALUES (:v)"), {"v": len(MIGRATIONS)})
    else:
        conn.execute(text("UPDATE schema_version SET version = :v"), {"v": len(MIGRATIONS)})
    return len(MIGRATIONS)
