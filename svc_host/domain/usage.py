"""What a finished job was given and what it used, as accounting recorded it (the input of efficiency)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class JobUsage(BaseModel):
    """One finished job's allocation and use, from sacct's allocation line and its steps.

    ``None`` wherever accounting does not tell: a job cancelled before it started has no steps, hence no
    ``max_rss_bytes``; ``gpu_util_percent`` exists only where the site accounts ``gres/gpuutil``.
    """

    model_config = ConfigDict(frozen=True)

    job_id: str
    cpus: int | None = None
    """CPUs allocated (NCPUS)."""
    mem_bytes: int | None = None
    """Memory allocated (AllocTRES ``mem=``, else ReqMem)."""
    gpus: int | None = None
    """GPUs allocated (AllocTRES ``gres/gpu=``)."""
    time_limit_seconds: int | None = None
    """``None``: unlimited or unknown."""
    elapsed_seconds: int | None = None
    cpu_seconds: float | None = None
    """User plus system CPU time of every step (TotalCPU)."""
    max_rss_bytes: int | None = None
    """The largest MaxRSS of any step."""
    gpu_util_percent: float | None = None
    """Mean GPU utilisation of the busiest step, where the site accounts it."""
