"""The list form of a job (REST spec "Jobs") and the ``GET /api/jobs`` body of a whole queue as JSON bytes.

A queue can hold ten thousand jobs, read again every second: the body is built without the generic encoder,
and the bytes of a job svc did not submit are kept from one answer to the next while its ``JobStatus`` is the
same object (:class:`~svc_host.slurm.parse.SqueueReader` keeps the job of an unchanged squeue line).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from svc_host.domain.jobs import JobStatus
from svc_host.domain.times import clock


def list_form(job: JobStatus, command: list[str] | None, depends_on: list[str] | None = None) -> dict[str, Any]:
    """One job as the list endpoints show it."""
    nodes = job.nodes or 1
    gpus = job.gpus or 0
    return {
        "name": job.name or "",
        "job_id": int(job.job_id) if job.job_id.isdigit() else job.job_id,
        "status": job.state.value,
        "depends_on": depends_on or [],
        "command": command or [],
        "resources": {
            "nodes": nodes,
            "gpus_per_node": gpus // nodes if nodes else gpus,
            "partition": job.partition,
            "time_limit": job.time_limit,
        },
        "partition": job.partition or "",
        "nodes": nodes,
        "gpus": gpus,
        "gpu_types": {kind: count for kind, count in job.gpu_types if kind},  # a100: 1 of --gres=gpu:a100:1
        "elapsed_time": clock(job.elapsed_seconds) or "0:00:00",
    }


def of_user(jobs: Sequence[JobStatus], login: str) -> list[JobStatus]:
    """The jobs of ``login`` ("my jobs" on a queue shared with other users), in the queue's order."""
    return [job for job in jobs if job.user == login]


class JobListEncoder:
    """Encodes one transport's queue again and again (``encode``), keeping only the last answer's bytes."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[JobStatus, bytes]] = {}

    def encode(
        self, jobs: Sequence[JobStatus], commands: Mapping[str, list[str]], upstream: Mapping[str, list[str]]
    ) -> bytes:
        """The JSON array of ``jobs`` in list form: ``commands`` are the recorded commands of the jobs svc
        submitted, ``upstream`` the upstream job names of workflow jobs (both by job id)."""
        known = self._known
        kept: dict[int, tuple[JobStatus, bytes]] = {}
        parts = []
        for job in jobs:
            entry = known.get(id(job))
            if entry is None or entry[0] is not job or job.job_id in commands:
                command = commands.get(job.job_id)
                if command is not None:  # svc's own: the command and upstream names come from the store
                    parts.append(orjson.dumps(list_form(job, command, upstream.get(job.job_id))))
                    continue
                entry = (job, orjson.dumps(list_form(job, None)))
            kept[id(job)] = entry
            parts.append(entry[1])
        self._known = kept
        return b"[" + b",".join(parts) + b"]"
