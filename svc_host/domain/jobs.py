"""Jobs as svc sees them: the canonical state set and one status record for every source."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class JobState(StrEnum):
    """Canonical job status. Every raw Slurm state maps to exactly one of these (see ``svc_host.slurm.states``)."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    TIMEOUT = "TIMEOUT"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    NODE_FAIL = "NODE_FAIL"
    PREEMPTED = "PREEMPTED"
    BOOT_FAIL = "BOOT_FAIL"
    DEADLINE = "DEADLINE"
    UNKNOWN = "UNKNOWN"

    @property
    def is_terminal(self) -> bool:
        """True when the job will never change state again."""
        return self not in _LIVE


_LIVE = frozenset({JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED, JobState.UNKNOWN})


class JobStatus(BaseModel):
    """One job as reported by squeue, sacct or scontrol, normalised.

    ``raw_state`` keeps Slurm's own words (``CANCELLED by 1001``, ``COMPLETING``) next to the canonical ``state``.
    """

    model_config = ConfigDict(frozen=True)

    job_id: str
    state: JobState
    raw_state: str
    name: str | None = None
    user: str | None = None
    partition: str | None = None
    nodes: int | None = None
    gpus: int | None = None
    """GPUs of the whole job (gpus per node x nodes) when the source tells."""
    gpu_types: tuple[tuple[str, int], ...] = ()
    """The job's GPUs per type (``(("a100", 1),)``; ``""`` for GPUs asked without a type) when the source tells
    (its TRES): what "1 GPU" of ``--gres=gpu:a100:1`` is."""
    elapsed_seconds: int | None = None
    time_limit: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    reason: str | None = None
    node_list: str | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    started_at: datetime | None = None
    """When the job started, when the source tells (accounting does; squeue's elapsed time does not)."""
    ended_at: datetime | None = None
    """When the job ended, when the source tells."""
