"""What counts as a change of a job, a workflow run or a sweep, and which events may announce one (pure).

A read of a subject is an ``Observed``: its status, whether it can still change, and its parts (the job; the run
and each of its jobs; the sweep and each of its cells). Two reads differ where a part's status or id differs (a
retried job keeps its name and gets a new id), and ``diff`` lists those parts as ``{subject, id, name?, from,
to}``. Events only say when to read again: the change reported is always the difference between two reads, so
an event about a change the first read already saw wakes nobody, and a change made by another svc process is
found by the next read all the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

JOB_CHANGED = "job.status_changed"
RUN_CHANGED = "workflow_run.status_changed"
SWEEP_CHANGED = "sweep_run.status_changed"

Kind = Literal["job", "run", "sweep"]

EVENTS: Mapping[Kind, frozenset[str]] = {
    "job": frozenset({JOB_CHANGED}),
    "run": frozenset({RUN_CHANGED, JOB_CHANGED}),
    "sweep": frozenset({SWEEP_CHANGED, RUN_CHANGED}),
}
"""The events that may announce a change of each kind of subject."""


@dataclass(frozen=True)
class Subject:
    """What is waited for: a job (by id on a transport), a workflow run (by id) or a sweep (by id)."""

    kind: Kind
    id: str | int
    transport: str | None = None
    """The job's transport; runs and sweeps know their own."""

    def __str__(self) -> str:
        if self.kind == "job":
            return f"job {self.id} on {self.transport!r}"
        return f"workflow run {self.id!r}" if self.kind == "run" else f"sweep run {self.id}"


@dataclass(frozen=True)
class Part:
    """One thing whose status is shown: ``subject`` is ``job``, ``run``, ``cell`` or ``sweep``."""

    subject: str
    id: str | int | None
    status: str | None
    name: str | None = None


@dataclass(frozen=True)
class Observed:
    """One read of a subject from the store."""

    status: str
    final: bool
    """Nothing about it will change any more (a terminal job, run or sweep)."""
    transport: str
    parts: Mapping[str, Part]
    view: Mapping[str, Any]
    """What an interface shows of it (the fields of the tool's answer)."""
    job_ids: frozenset[str] = field(default_factory=frozenset)
    """The scheduler ids of a run's jobs, whose events concern the run."""


def diff(before: Observed, after: Observed) -> list[dict[str, Any]]:
    """The parts of ``after`` whose status or id differs from ``before`` (new parts included), in ``after``'s order."""
    changes = []
    for key, now in after.parts.items():
        was = before.parts.get(key)
        if was is not None and was.status == now.status and was.id == now.id:
            continue
        change: dict[str, Any] = {"subject": now.subject, "id": now.id}
        if now.name is not None:
            change["name"] = now.name
        change.update({"from": was.status if was is not None else None, "to": now.status})
        changes.append(change)
    return changes


def concerns(subject: Subject, name: str, payload: Mapping[str, Any], observed: Observed) -> bool:
    """Whether the event ``name`` with ``payload`` may be about ``subject`` (as last ``observed``)."""
    if subject.kind == "job":
        return name == JOB_CHANGED and _job_key(payload) == (subject.transport, str(subject.id))
    if subject.kind == "run":
        if name == RUN_CHANGED:
            return payload.get("id") == subject.id
        return (
            name == JOB_CHANGED
            and payload.get("transport") == observed.transport
            and (str(payload.get("job_id")) in observed.job_ids)
        )
    if name == SWEEP_CHANGED:
        return payload.get("id") == subject.id
    return name == RUN_CHANGED and payload.get("sweep_id") == subject.id


def _job_key(payload: Mapping[str, Any]) -> tuple[Any, str]:
    return payload.get("transport"), str(payload.get("job_id"))
