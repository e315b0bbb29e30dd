"""Which of the records Slurm printed are about the jobs svc asked for (pure).

Slurm's answers are not always about the ids on the command line: ``scontrol show job`` without an id (the fallback
when accounting is down) lists every job of the cluster, an array's id brings back its tasks, and a task not started
yet comes back inside a range of its array's tasks (``123_[4-9]``). Every answer passes through here before svc
reports or stores it, so an answer is about the job asked for or is "not found", never the first job of a list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from svc_host.slurm import arrays

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from svc_host.domain.jobs import JobStatus


def record_for(asked: str, records: Iterable[JobStatus]) -> JobStatus | None:
    """The record about job ``asked``: its own; else the range of tasks that holds it, under the id asked (a task
    pending, or cancelled before it started); else, for an array's own id, the first record of one of its tasks
    (:func:`~svc_host.slurm.arrays.answers`). ``None`` when no record is about it."""
    about = [record for record in records if arrays.answers(asked, record.job_id)]
    exact = next((record for record in about if record.job_id == asked), None)
    if exact is not None:
        return exact
    holding = next((record for record in about if arrays.in_range(record.job_id, asked)), None)
    if holding is not None:
        return holding.model_copy(update={"job_id": asked})
    return about[0] if about else None


def records_about(asked: Sequence[str], records: Iterable[JobStatus]) -> list[JobStatus]:
    """The records about one of the jobs ``asked`` (as :func:`~svc_host.slurm.arrays.answers` has it), in Slurm's
    order; the rest of a whole-cluster listing is dropped. Linear in both: a lookup per record, a range only
    compared with the asked tasks of its own array."""
    wanted = set(asked)
    tasks: dict[str, list[str]] = {}
    for job_id in wanted:
        array = arrays.array_of(job_id)
        if array is not None and not arrays.is_range(job_id):
            tasks.setdefault(array, []).append(job_id)
    kept = []
    for record in records:
        job_id = record.job_id
        owner = arrays.owner_of(job_id)
        if owner is None:
            about = job_id in wanted
        else:
            about = job_id in wanted or owner in wanted or any(arrays.in_range(job_id, t) for t in tasks.get(owner, ()))
        if about:
            kept.append(record)
    return kept
