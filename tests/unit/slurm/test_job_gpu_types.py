"""A job's GPUs with their types, from the recorded 24.11 listings (a100 and v100 on one node): "1 GPU" of
``--gres=gpu:a100:1`` is an a100 in squeue, sacct and scontrol alike, and the jobs list says so."""

from __future__ import annotations

import json
from pathlib import Path

from svc_host.api.job_list import list_form
from svc_host.domain.jobs import JobStatus
from svc_host.slurm.parse import parse_sacct, parse_scontrol_jobs, parse_squeue

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm-24.11"
TYPED = {"26": (("a100", 1),), "27": (("a100", 1), ("v100", 1)), "28": (("v100", 2),)}
"""Jobs 26 (a100:1, running), 27 (one a100 and one v100) and 28 (v100:2, pending) of the recording."""


def _types(jobs: list[JobStatus]) -> dict[str, tuple[tuple[str, int], ...]]:
    return {job.job_id: job.gpu_types for job in jobs if job.job_id in TYPED}


def test_every_command_tells_the_types() -> None:
    for parse, name in ((parse_squeue, "squeue_jobs.txt"), (parse_sacct, "sacct_jobs.txt")):
        assert _types(parse((FIXTURES / name).read_text(encoding="utf-8"))) == TYPED, name
    assert _types(parse_scontrol_jobs((FIXTURES / "scontrol_show_job.txt").read_text(encoding="utf-8"))) == TYPED


def test_the_list_form_names_them_and_keeps_the_count() -> None:
    jobs = {job.job_id: job for job in parse_squeue((FIXTURES / "squeue_jobs.txt").read_text(encoding="utf-8"))}
    item = json.loads(json.dumps(list_form(jobs["27"], None)))
    assert (item["gpus"], item["gpu_types"]) == (2, {"a100": 1, "v100": 1})
    untyped = next(job for job in jobs.values() if job.gpus == 0)
    assert list_form(untyped, None)["gpu_types"] == {}
