"""Parse :func:`~svc_host.slurm.argv.sacct_usage_argv` output: what each finished job was given and used.

The allocation line (``123``, ``123_4``) says what the job was given (NCPUS, AllocTRES, ReqMem, Timelimit) and
its TotalCPU (the sum over its steps); the steps (``123.batch``, ``123.extern``, ``123.0``) carry MaxRSS and
the per-step TRES usage, so the peak is the largest of them.
"""

from __future__ import annotations

import re
from typing import Final

from svc_host.domain.usage import JobUsage
from svc_host.errors import SlurmParseError
from svc_host.slurm.argv import DELIMITER, SACCT_USAGE_FIELDS
from svc_host.slurm.states import normalize_state
from svc_host.slurm.values import gpus_in_tres, limit_seconds

_UNITS: Final = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_SIZE = re.compile(r"(?P<number>\d+(?:\.\d+)?)(?P<unit>[KMGTP]?)(?P<per>[nc]?)", re.IGNORECASE)
_CPU_TIME = re.compile(r"(?:(?P<days>\d+)-)?(?:(?P<hours>\d+):)?(?P<minutes>\d+):(?P<seconds>\d+(?:\.\d+)?)")


def parse_size(text: str, *, cpus: int | None = None, nodes: int | None = None) -> int | None:
    """Bytes in a Slurm size (``1038988K``, ``2G``, ``1000M``; bare numbers are bytes in MaxRSS); ``None`` when
    empty. ``4000Mc``/``4000Mn`` (ReqMem before Slurm 21.08) are per CPU/node and multiplied out.

    Raises:
        SlurmParseError: the text is not a size.
    """
    text = text.strip()
    if not text:
        return None
    match = _SIZE.fullmatch(text)
    if match is None:
        msg = f"unexpected size {text!r}: expected a Slurm size such as '1038988K' or '2G'"
        raise SlurmParseError(msg)
    per = {"c": cpus, "n": nodes}.get(match["per"].lower(), 1) or 1
    return round(float(match["number"]) * _UNITS[match["unit"].upper()] * per)


def parse_cpu_time(text: str) -> float | None:
    """Seconds in sacct's TotalCPU (``00:03.783``, ``01:02:03``, ``1-02:03:04``); ``None`` when empty.

    Raises:
        SlurmParseError: the text is not a CPU time.
    """
    text = text.strip()
    if not text:
        return None
    match = _CPU_TIME.fullmatch(text)
    if match is None:
        msg = f"unexpected CPU time {text!r}: expected [D-][HH:]MM:SS[.mmm]"
        raise SlurmParseError(msg)
    hours = int(match["days"] or 0) * 24 + int(match["hours"] or 0)
    return hours * 3600 + int(match["minutes"]) * 60 + float(match["seconds"])


def _tres_value(tres: str, key: str) -> str | None:
    for item in tres.split(","):
        name, _, value = item.strip().partition("=")
        if name == key:
            return value
    return None


def parse_sacct_usage(stdout: str) -> dict[str, JobUsage]:
    """Each ended job's :class:`JobUsage`, by job id, from the allocation line and the job's steps; a job
    accounting does not call ended yet is left out (asked again later).

    Raises:
        SlurmParseError: a line does not have the format's columns, or a value is not what its column holds.
    """
    allocations: dict[str, dict[str, str]] = {}
    peaks: dict[str, int] = {}
    gpu_util: dict[str, float] = {}
    for number, raw in enumerate(stdout.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        values = line.split(DELIMITER)
        if len(values) != len(SACCT_USAGE_FIELDS):
            msg = f"unexpected sacct output on line {number} (expected {len(SACCT_USAGE_FIELDS)} columns): {line!r}"
            raise SlurmParseError(msg)
        row = dict(zip(SACCT_USAGE_FIELDS, values, strict=True))
        job_id, dot, _ = row["JobID"].strip().partition(".")
        if not job_id[:1].isdigit():
            msg = f"unexpected sacct output on line {number} (job id {row['JobID']!r}): {line!r}"
            raise SlurmParseError(msg)
        if not dot:
            if normalize_state(row["State"]).is_terminal:
                allocations[job_id] = row
            continue
        try:
            rss = parse_size(row["MaxRSS"])
        except SlurmParseError as error:
            raise SlurmParseError(f"unexpected sacct output on line {number} ({error}): {line!r}") from None
        if rss is not None:
            peaks[job_id] = max(peaks.get(job_id, 0), rss)
        util = _tres_value(row["TRESUsageInAve"], "gres/gpuutil")
        if util is not None and util.replace(".", "", 1).isdigit():
            gpu_util[job_id] = max(gpu_util.get(job_id, 0.0), float(util))
    return {job_id: _usage(job_id, row, peaks.get(job_id), gpu_util.get(job_id)) for job_id, row in allocations.items()}


def _usage(job_id: str, row: dict[str, str], peak: int | None, gpu_util: float | None) -> JobUsage:
    try:
        cpus = int(row["NCPUS"]) if row["NCPUS"].strip() else None
        nodes_text = _tres_value(row["AllocTRES"], "node")
        nodes = int(nodes_text) if nodes_text and nodes_text.isdigit() else None
        allocated = _tres_value(row["AllocTRES"], "mem")
        mem = parse_size(allocated) if allocated else parse_size(row["ReqMem"], cpus=cpus, nodes=nodes)
        elapsed = int(row["ElapsedRaw"]) if row["ElapsedRaw"].strip() else None
        return JobUsage(
            job_id=job_id,
            cpus=cpus,
            mem_bytes=mem,
            gpus=gpus_in_tres(row["AllocTRES"]) if row["AllocTRES"].strip() else None,
            time_limit_seconds=limit_seconds(row["Timelimit"]),
            elapsed_seconds=elapsed,
            cpu_seconds=parse_cpu_time(row["TotalCPU"]),
            max_rss_bytes=peak,
            gpu_util_percent=gpu_util,
        )
    except (SlurmParseError, ValueError) as error:
        raise SlurmParseError(f"unexpected sacct usage of job {job_id} ({error}): {'|'.join(row.values())!r}") from None
