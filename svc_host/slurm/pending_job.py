"""A pending job as an explanation reads it, what the explanation says, and the words for amounts of TRES.

Shared by :mod:`svc_host.slurm.pending` (the reasons) and :mod:`svc_host.slurm.pending_limits` (the QOS and
association limits a reason names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from svc_host.domain.resources import NodeInfo
from svc_host.slurm.pending_inputs import Limits, LiveJob, tres_map


@dataclass(frozen=True)
class PendingJob:
    """The fields of ``scontrol show job`` an explanation reads."""

    job_id: str
    state: str
    reason: str
    user: str
    account: str
    qos: str
    partition: str
    time_limit: str
    nodes: str
    tres: dict[str, str]
    dependency: str
    eligible_time: str

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> PendingJob:
        """From one ``scontrol --oneliner show job`` record (:func:`svc_host.slurm.scontrol.split_oneliner`)."""
        task = fields.get("ArrayTaskId", "")
        job_id = fields.get("JobId", "")
        if task and task.isdigit():
            job_id = f"{fields.get('ArrayJobId', job_id)}_{task}"
        return cls(
            job_id=job_id,
            state=fields.get("JobState", ""),
            # scontrol writes a reason's spaces as "_" ("ReqNodeNotAvail,_UnavailableNodes:x").
            reason=fields.get("Reason", "None").replace("_", " "),
            user=fields.get("UserId", "").split("(")[0],
            account=fields.get("Account", ""),
            qos=fields.get("QOS", ""),
            partition=fields.get("Partition", ""),
            time_limit=fields.get("TimeLimit", ""),
            nodes=fields.get("NumNodes", "1").split("-")[0],
            tres=tres_map(fields.get("ReqTRES") or fields.get("TRES", "")),
            dependency=fields.get("Dependency", "(null)"),
            eligible_time=fields.get("EligibleTime", ""),
        )


@dataclass(frozen=True)
class Binding:
    """The limit a job waits on: where it is set, its column, the value that binds and what is in use."""

    scope: str
    """``qos``, ``association``, ``partition`` or ``nodes``."""
    name: str
    field: str
    value: str
    used: str | None = None


@dataclass(frozen=True)
class Explanation:
    """A pending job's reason as Slurm says it, as a sentence, and the limit behind it when there is one.

    ``needs_action``: the job will not start without a change (a hold, a dependency that can never be met, a
    request above a per-job limit, nodes that are down)."""

    reason: str
    sentence: str
    binding: Binding | None = None
    needs_action: bool = False


@dataclass(frozen=True)
class Context:
    """Everything around a job an explanation may name."""

    qos: Limits | None = None
    associations: dict[tuple[str, str], Limits] | None = None
    partition: dict[str, str] | None = None
    nodes: tuple[NodeInfo, ...] = ()
    live: tuple[LiveJob, ...] = ()


UNIT: Final = {
    "gres/gpu": ("GPU", "GPUs"),
    "cpu": ("CPU", "CPUs"),
    "node": ("node", "nodes"),
    "billing": ("billing unit", "billing units"),
}

# What the middle of a QOS*/Assoc* reason means: the TRES it counts (None for job counts and wall time).


def count(number: int | str, unit: str) -> str:
    singular, plural = UNIT.get(unit, (unit, unit))
    return f"{number} {singular if str(number) == '1' else plural}"


def tres_word(tres: str) -> str:
    if tres.startswith("gres/gpu"):
        return "GPUs"
    if tres == "mem":
        return "memory"
    return UNIT.get(tres, (tres, tres))[1]


def amount(tres: str, value: int | str) -> str:
    if tres == "mem":
        return f"{value}M of memory" if str(value).isdigit() else f"{value} of memory"
    return count(value, "gres/gpu" if tres.startswith("gres/gpu") else tres)


def _mem_mb(text: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTP]?)", text.strip())
    if match is None:
        return 0
    scale = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024**2, "P": 1024**3}[match[2]]
    return round(float(match[1]) * scale)


def number(tres: str, text: str) -> int:
    return _mem_mb(text) if tres == "mem" else int(text) if text.isdigit() else 0
