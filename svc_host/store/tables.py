"""The tables. Their columns must match the DDL of ``migrations.py`` (a test checks that they do)."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel


class JobRecord(SQLModel, table=True):
    """One submitted job: what was asked (no secret values), where its logs go, what state it is in."""

    __tablename__ = "job"

    id: int | None = Field(default=None, primary_key=True)
    transport: str = Field(index=True)
    job_id: str = Field(index=True)
    name: str
    source: str
    """Who submitted it: ``web``, ``mcp``, ``cli`` or ``workflow``."""
    state: str = Field(index=True)
    raw_state: str
    exit_code: int | None = None
    partition: str | None = None
    nodes: int | None = None
    gpus: int | None = None
    resources: str = "{}"
    """The requested resources as JSON."""
    command: str = "[]"
    """The command as a JSON list of words (a single shell line is one word)."""
    env_var_names: str = "[]"
    """Names of the environment variables set for the job; values are never stored."""
    work_dir: str | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    submitted_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    updated_at: datetime
    elapsed_seconds: int | None = None


class JobTransition(SQLModel, table=True):
    """A state change of a job as the monitor saw it."""

    __tablename__ = "job_transition"

    id: int | None = Field(default=None, primary_key=True)
    job_pk: int = Field(foreign_key="job.id", index=True)
    from_state: str | None
    to_state: str
    raw_state: str
    at: datetime
