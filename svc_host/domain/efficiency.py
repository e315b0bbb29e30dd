"""How well finished jobs used what they asked for: CPU, memory and time efficiency, GPUs allocated, and a
concrete suggestion for each resource a completed job used under :data:`FLAG_BELOW` of.

Pure: it reads :class:`~svc_host.domain.usage.JobUsage` (what accounting recorded, see
:mod:`svc_host.slurm.usage`) and returns plain dicts that REST, MCP and the CLI show as they are.

* CPU efficiency is CPU time over CPUs x elapsed (``asked 8 CPUs, used 1.2 on average``);
* memory efficiency is the largest step's MaxRSS over the memory allocated;
* time efficiency is elapsed over the time limit.

Only ``COMPLETED`` jobs are flagged: a job that failed or was cancelled early did not show what it needs.
A suggestion leaves headroom (:data:`HEADROOM` over the peak, :data:`TIME_HEADROOM` over the runtime) and is
made only when it is smaller than what was asked (for memory, by at least :data:`MIN_MEMORY_SAVING`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Final

from svc_host.domain.usage import JobUsage

FLAG_BELOW: Final = 80.0
"""A completed job that used under this percentage of a resource it asked for is flagged."""
HEADROOM: Final = 1.2
"""Suggested memory and CPUs: the peak (or mean) plus 20%, rounded up."""
TIME_HEADROOM: Final = 1.5
"""Suggested time limit: the runtime plus 50%, rounded up to whole 5 minutes."""
MIN_MEMORY_SAVING: Final = 1024**3
"""Memory is flagged only when the suggestion frees at least 1 GiB: a small job on a site's default memory per CPU
(often a few hundred MB to a few GB, given without being asked) is not worth a warning."""
GPU_NOT_ACCOUNTED: Final = (
    "GPU utilisation is not recorded: this cluster's accounting has no gres/gpuutil "
    "(AccountingStorageTRES with GPU metrics gathered by NVML/RSMI); only the allocation is known"
)

_MIB: Final = 1024**2


def format_bytes(value: int) -> str:
    """``2G``, ``6.1G``, ``101M``, ``512K``: Slurm's binary units, one decimal where it matters."""
    for unit, size in (("T", 1024**4), ("G", 1024**3), ("M", _MIB), ("K", 1024)):
        if value >= size:
            number = value / size
            return f"{number:.0f}{unit}" if number >= 100 or number == int(number) else f"{number:.1f}{unit}"
    return f"{value}B"


def format_duration(seconds: float) -> str:
    """``4h``, ``12m``, ``1h30m``, ``5s``, ``2d3h``: the two largest units that are not zero."""
    whole = round(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, whole = divmod(whole, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts[:2]) or "0s"


def _memory_request(peak: int) -> int:
    """The next of 1, 1.5, 2, 3, 4, 6, 8, ... MiB x 2^k above the peak plus headroom (64M at least)."""
    wanted = max(peak * HEADROOM, 64 * _MIB)
    power = 2 ** math.floor(math.log2(wanted / _MIB)) * _MIB
    for step in (power, power * 3 // 2, power * 2):
        if step >= wanted:
            return int(step)
    return int(power * 2)


def _percent(used: float, given: float) -> float:
    return round(100.0 * used / given, 1)


def job_efficiency(usage: JobUsage, *, state: str) -> dict[str, Any]:
    """CPU, memory and time efficiency of one finished job and, if it completed, what to ask for next time."""
    flags: list[dict[str, str]] = []
    completed = state == "COMPLETED"
    cpu = memory = time = None
    elapsed = usage.elapsed_seconds
    if usage.cpus and elapsed and usage.cpu_seconds is not None:
        average = usage.cpu_seconds / elapsed
        cpu = {"allocated": usage.cpus, "used_average": round(average, 2), "percent": _percent(average, usage.cpus)}
        suggested = max(1, math.ceil(average * HEADROOM))
        if completed and cpu["percent"] < FLAG_BELOW and suggested < usage.cpus:
            message = f"asked {usage.cpus} CPUs, used {average:.1f} on average: ask for {suggested}"
            flags.append({"resource": "cpu", "message": message, "suggested": str(suggested)})
    if usage.mem_bytes and usage.max_rss_bytes is not None:
        percent = _percent(usage.max_rss_bytes, usage.mem_bytes)
        memory = {"allocated_bytes": usage.mem_bytes, "peak_bytes": usage.max_rss_bytes, "percent": percent}
        request = _memory_request(usage.max_rss_bytes)
        if completed and percent < FLAG_BELOW and usage.mem_bytes - request >= MIN_MEMORY_SAVING:
            asked, peak, ask = format_bytes(usage.mem_bytes), format_bytes(usage.max_rss_bytes), format_bytes(request)
            flags.append(
                {"resource": "memory", "message": f"asked {asked}, peaked at {peak}: ask for {ask}", "suggested": ask}
            )
    if usage.time_limit_seconds and elapsed is not None:
        percent = _percent(elapsed, usage.time_limit_seconds)
        time = {"limit_seconds": usage.time_limit_seconds, "elapsed_seconds": elapsed, "percent": percent}
        limit = max(300, math.ceil(elapsed * TIME_HEADROOM / 300) * 300)
        if completed and percent < FLAG_BELOW and limit < usage.time_limit_seconds:
            asked, ran, ask = (format_duration(s) for s in (usage.time_limit_seconds, elapsed, limit))
            flags.append({"resource": "time", "message": f"asked {asked}, ran {ran}: ask for {ask}", "suggested": ask})
    return {
        "cpu": cpu,
        "memory": memory,
        "time": time,
        "gpus": gpu_report(usage.gpus or 0, usage.gpu_util_percent),
        "flagged": bool(flags),
        "suggestions": flags,
    }


def gpu_report(allocated: int, utilisation: float | None) -> dict[str, Any]:
    """The GPUs a job held and, where the site accounts it, how busy they were; otherwise say why not."""
    if not allocated:
        return {"allocated": 0, "utilisation_percent": None, "note": None}
    note = None if utilisation is not None else GPU_NOT_ACCOUNTED
    return {"allocated": allocated, "utilisation_percent": utilisation, "note": note}


@dataclass
class Totals:
    """Sums over many finished jobs from which aggregate efficiency follows; integers only, so totals kept per
    day (:mod:`svc_host.store.day_stats`) add up to exactly what a scan of the jobs gives."""

    measured: int = 0
    """Jobs whose usage accounting recorded."""
    flagged: int = 0
    cpu_used_ms: int = 0
    cpu_given_ms: int = 0
    """CPUs x elapsed, over the jobs with a known CPU time."""
    mem_peak_bytes: int = 0
    mem_given_bytes: int = 0
    """Over the jobs with a known peak."""
    time_used_seconds: int = 0
    time_given_seconds: int = 0
    """Over the jobs with a time limit."""
    gpu_seconds: int = 0

    @classmethod
    def of(cls, usage: JobUsage, *, state: str) -> Totals:
        """One job's contribution."""
        totals = cls(measured=1, flagged=int(job_efficiency(usage, state=state)["flagged"]))
        elapsed = usage.elapsed_seconds or 0
        if usage.cpus and usage.cpu_seconds is not None:
            totals.cpu_used_ms = round(usage.cpu_seconds * 1000)
            totals.cpu_given_ms = usage.cpus * elapsed * 1000
        if usage.mem_bytes and usage.max_rss_bytes is not None:
            totals.mem_peak_bytes, totals.mem_given_bytes = usage.max_rss_bytes, usage.mem_bytes
        if usage.time_limit_seconds:
            totals.time_used_seconds, totals.time_given_seconds = elapsed, usage.time_limit_seconds
        totals.gpu_seconds = (usage.gpus or 0) * elapsed
        return totals

    def add(self, other: Totals, sign: int = 1) -> None:
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + sign * getattr(other, field.name))

    def as_vector(self) -> tuple[int, ...]:
        return tuple(getattr(self, field.name) for field in fields(self))

    def summary(self, jobs: int) -> dict[str, Any]:
        """The aggregate view: jobs, how many were measured and flagged, and each efficiency over the lot."""

        def ratio(used: int, given: int) -> float | None:
            return _percent(used, given) if given else None

        return {
            "jobs": jobs,
            "measured": self.measured,
            "flagged": self.flagged,
            "cpu_percent": ratio(self.cpu_used_ms, self.cpu_given_ms),
            "memory_percent": ratio(self.mem_peak_bytes, self.mem_given_bytes),
            "time_percent": ratio(self.time_used_seconds, self.time_given_seconds),
            "gpu_hours": round(self.gpu_seconds / 3600, 2),
        }
