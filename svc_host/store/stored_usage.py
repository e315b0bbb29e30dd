"""The usage a job row keeps (the monitor stored it when the job ended), read without the ORM: the efficiency
views and the MCP tools that show them import this, and importing it costs no SQLAlchemy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from svc_host.domain.usage import JobUsage

if TYPE_CHECKING:
    from svc_host.store.tables import JobRecord


def usage_of(record: JobRecord) -> JobUsage | None:
    """The usage stored with a job, ``None`` until accounting gave it."""
    if record.usage_at is None:
        return None
    return JobUsage(
        job_id=record.job_id,
        cpus=record.alloc_cpus,
        mem_bytes=record.mem_bytes,
        gpus=record.gpus,
        time_limit_seconds=record.time_limit_seconds,
        elapsed_seconds=record.elapsed_seconds,
        cpu_seconds=record.cpu_time_ms / 1000 if record.cpu_time_ms is not None else None,
        max_rss_bytes=record.max_rss_bytes,
        gpu_util_percent=record.gpu_util_percent,
    )
