"""The ``GET /api/jobs`` body of a recorded real queue: the same bytes the generic JSON encoding of the list form
gives, answer after answer, with svc's own jobs carrying their command and upstream names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from svc_host.api.job_list import JobListEncoder, list_form
from svc_host.runtime.snapshots import SchedulerSnapshots
from svc_host.slurm.parse import SqueueReader
from svc_host.testing.fake import FakeTransport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"
EARLIER = (FIXTURES / "squeue_jobs.txt").read_text(encoding="utf-8")
LATER = (FIXTURES / "squeue_jobs_later.txt").read_text(encoding="utf-8")


def generic(content: Any) -> bytes:
    """How FastAPI's own JSON responses encode (compact, UTF-8)."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def test_body_is_the_generic_encoding_of_the_list_form() -> None:
    jobs = SqueueReader().parse(EARLIER)
    body = JobListEncoder().encode(jobs, {}, {})
    assert body == generic([list_form(job, None) for job in jobs])
    named = {item["job_id"]: item for item in json.loads(body)}
    assert named[5]["name"] == "a|b c ünï"
    assert named["14_0"]["elapsed_time"] == "0:00:52"
    # squeue printed 365-00:00:00, Slurm's stand-in for no limit
    assert named[6]["resources"] == {"nodes": 1, "gpus_per_node": 2, "partition": "gpu", "time_limit": "UNLIMITED"}


def test_next_answer_shows_what_changed() -> None:
    reader, encoder = SqueueReader(), JobListEncoder()
    encoder.encode(reader.parse(EARLIER), {}, {})
    jobs = reader.parse(LATER)
    body = encoder.encode(jobs, {}, {})
    assert body == generic([list_form(job, None) for job in jobs])
    named = {item["job_id"]: item for item in json.loads(body)}
    assert (named[13]["status"], named[5]["elapsed_time"], named[23]["status"]) == ("TIMEOUT", "0:01:48", "COMPLETED")


def test_a_job_svc_tracks_shows_its_command_and_upstream_names_once_it_does() -> None:
    reader, encoder = SqueueReader(), JobListEncoder()
    jobs = reader.parse(EARLIER)
    assert {item["job_id"]: item for item in json.loads(encoder.encode(jobs, {}, {}))}[16]["command"] == []
    commands, upstream = {"16": ["python", "train.py"]}, {"16": ["prepare"]}
    body = encoder.encode(reader.parse(EARLIER), commands, upstream)
    assert body == generic([list_form(job, commands.get(job.job_id), upstream.get(job.job_id)) for job in jobs])
    held = {item["job_id"]: item for item in json.loads(body)}[16]
    assert (held["command"], held["depends_on"]) == (["python", "train.py"], ["prepare"])
    untracked = encoder.encode(reader.parse(EARLIER), {}, {})  # svc stopped tracking it (it ended)
    assert untracked == generic([list_form(job, None) for job in jobs])


def test_each_transport_keeps_one_encoder_until_the_transports_are_rebuilt() -> None:
    snapshots = SchedulerSnapshots(lambda name: FakeTransport())
    first = snapshots.kept(("GET /api/jobs", "local"), JobListEncoder)
    assert snapshots.kept(("GET /api/jobs", "local"), JobListEncoder) is first
    assert snapshots.kept(("GET /api/jobs", "other"), JobListEncoder) is not first
    snapshots.clear()  # a transport name may now reach another cluster
    assert snapshots.kept(("GET /api/jobs", "local"), JobListEncoder) is not first
