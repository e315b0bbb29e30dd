"""The tables. Their columns must match the DDL of ``migrations.py`` (a test checks that they do); every integer
is 64-bit, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Index, Integer
from sqlmodel import Field, SQLModel


class JobRecord(SQLModel, table=True):
    """One submitted job: what was asked (no secret values), where its logs go, what state it is in.

    A job is known by ``(transport, job_id)``: each cluster numbers its jobs on its own, so two clusters' ids
    collide all the time (and one cluster's may repeat after a reset: the newest row wins)."""

    __tablename__ = "job"
    __table_args__ = (Index("ix_job_transport_job_id", "transport", "job_id"),)

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
    node_list: str | None = None
    """The node(s) the job ran on, once the scheduler has placed it."""
    alloc_cpus: int | None = None
    """CPUs the job was given, from accounting once it ended (with the fields below; ``usage_at`` says when)."""
    mem_bytes: int | None = None
    max_rss_bytes: int | None = None
    cpu_time_ms: int | None = None
    time_limit_seconds: int | None = None
    gpu_util_percent: int | None = None
    usage_at: datetime | None = None
    """When svc read the job's usage from accounting; ``None`` until then (or for ever without accounting)."""


class JobDayStats(SQLModel, table=True):
    """Per submission day (UTC), cluster and state, the sums ``GET /api/history/stats`` reads instead of scanning
    jobs (one cluster's, or every cluster's added up).

    Kept in the transaction of every job write (:mod:`svc_host.store.day_stats`), so they equal a scan exactly.
    """

    __tablename__ = "job_cluster_day_stats"

    day: str = Field(primary_key=True)
    """``YYYY-MM-DD`` of ``submitted_at``."""
    transport: str = Field(primary_key=True)
    """The job's cluster."""
    state: str = Field(primary_key=True)
    jobs: int = 0
    elapsed_sum: int = 0
    """Elapsed seconds of the ended jobs whose runtime is known, and how many they are."""
    elapsed_n: int = 0
    measured: int = 0
    flagged: int = 0
    cpu_used_ms: int = 0
    cpu_given_ms: int = 0
    mem_peak_bytes: int = 0
    mem_given_bytes: int = 0
    time_used_seconds: int = 0
    time_given_seconds: int = 0
    gpu_seconds: int = 0


class JobTransition(SQLModel, table=True):
    """A state change of a job as the monitor saw it."""

    __tablename__ = "job_transition"

    id: int | None = Field(default=None, primary_key=True)
    job_pk: int = Field(foreign_key="job.id", index=True)
    from_state: str | None
    to_state: str
    raw_state: str
    at: datetime


class WorkflowRunRecord(SQLModel, table=True):
    """One run of a workflow: what was asked, where, by whom, and how it stands.

    ``owner``/``lease_until`` say which engine (one per svc process) drives the run; another engine takes
    a run over only once its lease has run out (see ``svc_host.workflows.engine``).
    """

    __tablename__ = "workflow_run"

    id: str = Field(primary_key=True)
    """A UUID."""
    workflow_name: str = Field(index=True)
    yaml_path: str
    status: str = Field(index=True)
    """``pending`` (a sweep cell not launched yet), ``syncing``, ``submitting``, ``running``, ``completed``,
    ``failed`` or ``cancelled``."""
    started_at: datetime
    completed_at: datetime | None = None
    updated_at: datetime
    error: str | None = None
    args: str = "{}"
    """The resolved arguments (file args with the caller's laid over them) as JSON."""
    selection: str = "{}"
    """``from_job``/``to_job``/``single_job`` as JSON."""
    transport: str
    mount: str | None = None
    sync_mounts: str = "[]"
    """Names of the mounts synced before submitting, as JSON."""
    triggered_by: str
    """``web``, ``cli``, ``mcp`` or ``schedule``."""
    sweep_id: int | None = Field(default=None, index=True)
    owner: str | None = None
    lease_until: datetime | None = None


class WorkflowRunJob(SQLModel, table=True):
    """One job of a run: its rendered definition, its current scheduler job and its retry state."""

    __tablename__ = "workflow_run_job"

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="workflow_run.id", index=True)
    name: str
    position: int
    """Index in the run's topological order."""
    depends_on: str = "[]"
    """The kept dependencies as JSON ``["afterok:prep", ...]``."""
    definition: str
    """The ``JobDefinition`` (without ``dependency``) as JSON: enough to submit it again after a restart."""
    status: str
    """``WAITING``, ``SUBMITTING``, ``RETRYING``, ``SKIPPED`` or a canonical job state."""
    job_id: str | None = Field(default=None, index=True)
    """The scheduler id of the current attempt."""
    job_pk: int | None = None
    """The ``job`` row of the current attempt."""
    job_ids: str = "[]"
    """Scheduler ids of every attempt, oldest first, as JSON."""
    attempt: int = 0
    retries_left: int = 0
    retry_delay: int = 60
    next_retry_at: datetime | None = None
    submitting_since: datetime | None = None
    error: str | None = None
    updated_at: datetime
    retry_policy: str = "{}"
    """The job's ``RetryPolicy`` (``svc_host.workflows.retries``) as JSON."""
    interruptions_left: int = 0
    """Automatic retries left for ``NODE_FAIL``, ``BOOT_FAIL`` and ``PREEMPTED`` attempts."""
    exclude_nodes: str | None = None
    """Nodes the next attempts are submitted ``--exclude``-ing (where interrupted attempts ran)."""


class WorkflowRunAttempt(SQLModel, table=True):
    """One attempt of a workflow job: its ``job`` row (state, exit code, node, resources) and why another
    attempt followed it, or none did."""

    __tablename__ = "workflow_run_attempt"

    id: int | None = Field(default=None, primary_key=True)
    run_job_id: int = Field(foreign_key="workflow_run_job.id")
    attempt: int
    job_pk: int
    reason: str | None = None
    """The retry decision once the attempt ended (``OUT_OF_MEMORY: memory 1G -> 2G (x2, cap 4G)``)."""


class SweepRunRecord(SQLModel, table=True):
    """A parameter sweep: one workflow over a matrix of arguments; its cells are ``workflow_run`` rows with
    ``sweep_id`` set. The ``cells_*`` counters are recounted from the cells in the transaction of every cell
    status change (``svc_host.sweeps.cell_counts``), so they always add up to ``cell_count``."""

    __tablename__ = "sweep_run"

    id: int | None = Field(default=None, primary_key=True)
    name: str
    """The workflow's name."""
    workflow_yaml_path: str
    status: str = Field(index=True)
    """``pending``, ``running``, ``draining``, ``completed``, ``failed`` or ``cancelled``."""
    matrix: str = "{}"
    """Axis name -> list of scalar values, as JSON."""
    args: str = "{}"
    """The caller's arguments shared by every cell, as JSON."""
    fail_fast: bool = False
    max_parallel: int = 4
    cell_count: int
    cells_pending: int = 0
    cells_running: int = 0
    cells_completed: int = 0
    cells_failed: int = 0
    cells_cancelled: int = 0
    submission_source: str
    """``web``, ``mcp`` or ``cli``."""
    transport: str
    started_at: datetime = Field(index=True)
    completed_at: datetime | None = None
    cancel_requested_at: datetime | None = None
    updated_at: datetime
    error: str | None = None
    owner: str | None = None
    """The svc process launching its cells (an engine's owner name), as for workflow runs."""
    lease_until: datetime | None = None
    array_job_id: str | None = None
    max_failures: int | None = None
    """How many cells may fail before the sweep stops and cancels the rest (None: never stop)."""
    paused_at: datetime | None = None
    """When the sweep was paused (None: not paused): no cell is launched and its queued jobs are held."""
    cells_held: int = 0
    """Launched cells with a job waiting in the queue while the sweep is paused (recounted with the others)."""
    """The Slurm job array the cells were submitted as (cell ``i`` is task ``<id>_<i>``); ``None`` when each
    cell was submitted on its own."""


class ResourceSample(SQLModel, table=True):
    """GPU use of one partition at one moment, as the resource sampler saw it (``svc_host.runtime.sampler``).

    Kept for a bounded time (``SVC_RESOURCE_HISTORY_DAYS``) and row count; free GPUs are ``total - in use``.
    """

    __tablename__ = "resource_sample"

    id: int | None = Field(default=None, primary_key=True)
    transport: str
    partition: str
    at: datetime = Field(index=True)
    total_gpus: int
    gpus_in_use: int
    jobs_running: int
    nodes_total: int
    nodes_idle: int
    nodes_down: int


class ScheduleRecord(SQLModel, table=True):
    """A scheduled workflow run (``svc_host.schedules``): its spec as JSON, its next fire and its last outcome.

    ``version`` changes on every edit and every fire; a fire is claimed by compare-and-set on it.
    """

    __tablename__ = "schedule"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    spec: str
    """The ``ScheduleSpec`` as JSON."""
    enabled: bool
    version: int = 0
    next_fire_at: datetime | None = Field(default=None, index=True)
    last_fire_at: datetime | None = None
    last_outcome: str | None = None
    """``fired``, ``skipped_missed``, ``skipped_overlap`` or ``failed``."""
    last_error: str | None = None
    last_run_id: str | None = None
    last_sweep_id: int | None = None
    fire_count: int = 0
    created_at: datetime
    updated_at: datetime


class InteractiveSessionRecord(SQLModel, table=True):
    """An interactive session (``svc_host.sessions``): a Slurm job running a web app, keyed like jobs by
    ``(cluster, job_id)``, with its state as svc's watch last decided it and why it ended.

    The session's secret is not here: it lives in the session's directory on the cluster (0600, the file the node
    guard reads), and svc reads it through the transport when it needs it (``svc_host.sessions.secrets``), so no
    copy of a live secret sits in a database a backup or a shared PostgreSQL may expose."""

    __tablename__ = "interactive_session"

    cluster: str = Field(primary_key=True)
    """The transport the job runs on."""
    job_id: str = Field(primary_key=True)
    kind: str
    fields: str = "{}"
    """The kind's form as given, validated, as JSON (no secret ever: kinds' fields hold none)."""
    source: str
    """Who started it: ``web``, ``mcp`` or ``cli``."""
    state: str = Field(index=True)
    """``queued``, ``starting``, ``ready`` or ``ended``."""
    end_reason: str | None = None
    end_detail: str | None = None
    """Words about the end (an app's stderr tail, bounded), or ``None``."""
    session_dir: str
    """The session's directory on the cluster (absolute)."""
    node_host: str | None = None
    node_port: int | None = None
    """Where the node guard listens, from ``endpoint.json`` once the job wrote it."""
    created_at: datetime
    started_at: datetime | None = None
    ready_at: datetime | None = None
    ended_at: datetime | None = None
    time_limit_seconds: int | None = None
    start_timeout_seconds: int
    idle_minutes: int | None = None
    last_activity: datetime | None = None
    """The last proxied request or busy kernel seen (the idle clock starts at ready)."""
    idle_warned_at: datetime | None = None
    stop_requested_at: datetime | None = None
    """When someone asked to stop it: the job's end is then ``stopped``, whatever state Slurm gives it."""
    updated_at: datetime


def _integers_are_64_bit(*models: type[SQLModel]) -> None:
    """Bind every integer column as BIGINT: what the migrations create on PostgreSQL (SQLite's integers are 64-bit
    anyway), so a value past 2**31 is never cast to a 32-bit INTEGER on the way in."""
    for model in models:
        for column in SQLModel.metadata.tables[str(model.__tablename__)].columns:
            if isinstance(column.type, Integer) and not isinstance(column.type, BigInteger):
                column.type = BigInteger()


_integers_are_64_bit(
    JobRecord,
    JobDayStats,
    JobTransition,
    WorkflowRunRecord,
    WorkflowRunJob,
    SweepRunRecord,
    ResourceSample,
    ScheduleRecord,
    InteractiveSessionRecord,
)
