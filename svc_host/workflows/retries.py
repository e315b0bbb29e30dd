"""Which ended attempts a workflow job retries, and with what resources: pure rules, no I/O.

By how the attempt ended:

* ``NODE_FAIL``, ``BOOT_FAIL``, ``PREEMPTED`` (the cluster's doing, not the job's): retried at once, up to
  ``on_interruption.retries`` times (default 2), optionally with the failed node excluded.
* ``OUT_OF_MEMORY``, ``TIMEOUT``: retried at once only under the job's ``escalate.memory`` / ``escalate.time``
  rule, with the resource multiplied by the rule's factor and held to its cap; at the cap, not retried.
* ``FAILED`` (and ``DEADLINE``): retried after ``retry_delay`` only while the opt-in ``retry: N`` lasts.
* ``CANCELLED``: never (a user or svc meant it).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, field_validator

from svc_host.domain.jobs import JobState
from svc_host.errors import SlurmParseError
from svc_host.slurm.values import parse_duration

INTERRUPTED = frozenset({JobState.NODE_FAIL.value, JobState.BOOT_FAIL.value, JobState.PREEMPTED.value})
DEFAULT_INTERRUPTION_RETRIES = 2
MAX_INTERRUPTION_RETRIES = 100
MAX_FACTOR = 16.0

_MEMORY = re.compile(r"^(?P<amount>\d+)(?P<unit>[KMGT]?)B?$", re.IGNORECASE)
_UNIT_MB = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 * 1024}


def memory_mb(text: str) -> int:
    """Megabytes in a ``--mem`` value (``16G``, ``500M``, ``64000``: megabytes; ``K`` rounds up); ``ValueError``."""
    match = _MEMORY.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a memory size like 16G, 500M or 64000 (megabytes)")
    return math.ceil(int(match["amount"]) * _UNIT_MB[match["unit"].upper()])


def format_memory(mb: int) -> str:
    """``2048`` -> ``2G``, ``1536`` -> ``1536M`` (what sbatch accepts, in the largest exact unit)."""
    return f"{mb // 1024}G" if mb % 1024 == 0 else f"{mb}M"


def time_seconds(text: str) -> int | None:
    """Seconds in a ``--time`` value (``30`` is minutes); ``None`` for ``UNLIMITED``; ``ValueError`` otherwise."""
    try:
        return parse_duration(text)
    except SlurmParseError as exc:
        raise ValueError(f"{text!r} is not a time like 30, 4:00:00 or 1-00:00:00") from exc


def format_time(seconds: int) -> str:
    """``5400`` -> ``1:30:00``, ``90000`` -> ``1-01:00:00`` (Slurm's own forms)."""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}" if days else clock


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    factor: float = Field(gt=1, le=MAX_FACTOR)
    """What the resource is multiplied by for the next attempt."""
    max: str = Field(min_length=1, max_length=64)
    """The cap: never asked for more; an attempt that ended at the cap is not retried."""


class MemoryRule(_Rule):
    """``escalate.memory``: an ``OUT_OF_MEMORY`` attempt is retried with ``memory_per_node`` x ``factor``."""

    @field_validator("max")
    @classmethod
    def _size(cls, value: str) -> str:
        memory_mb(value)
        return value


class TimeRule(_Rule):
    """``escalate.time``: a ``TIMEOUT`` attempt is retried with ``time_limit`` x ``factor`` (whole minutes)."""

    @field_validator("max")
    @classmethod
    def _time(cls, value: str) -> str:
        if time_seconds(value) is None:
            raise ValueError("the cap must be a finite time such as 4:00:00")
        return value


class Escalate(BaseModel):
    """``escalate``: the rules under which ``OUT_OF_MEMORY`` and ``TIMEOUT`` attempts are retried."""

    model_config = ConfigDict(extra="forbid")

    memory: MemoryRule | None = None
    time: TimeRule | None = None


class OnInterruption(BaseModel):
    """``on_interruption``: retries of attempts the cluster ended (``NODE_FAIL``, ``BOOT_FAIL``, ``PREEMPTED``)."""

    model_config = ConfigDict(extra="forbid")

    retries: int = Field(default=DEFAULT_INTERRUPTION_RETRIES, ge=0, le=MAX_INTERRUPTION_RETRIES)
    exclude_node: bool = False
    """Submit the next attempt with ``--exclude`` of the node(s) the interrupted attempt ran on."""


class RetryPolicy(BaseModel):
    """A job's retry rules as the engine stores them with the run (``workflow_run_job.retry_policy``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retry: int = 0
    """The opt-in retries of ``FAILED`` attempts (the workflow's ``retry``)."""
    on_interruption: OnInterruption = Field(default_factory=OnInterruption)
    escalate: Escalate = Field(default_factory=Escalate)

    @property
    def escalates(self) -> bool:
        """Whether an ``OUT_OF_MEMORY`` or ``TIMEOUT`` attempt may be retried."""
        return self.escalate.memory is not None or self.escalate.time is not None


@dataclass(frozen=True)
class Ended:
    """An attempt that ended, as the decision needs it."""

    state: str
    policy: RetryPolicy
    retries_left: int = 0
    interruptions_left: int = 0
    node: str | None = None
    memory: str | None = None
    """The attempt's ``memory_per_node`` (``None``: the partition's default)."""
    time_limit: str | None = None


@dataclass(frozen=True)
class Retry:
    """Submit another attempt: ``reason`` says why, ``resources`` what changes, ``exclude`` a node list to avoid."""

    reason: str
    at_once: bool
    """Retried immediately (interruptions, escalations) rather than after ``retry_delay`` (opt-in retries)."""
    retries_left: int
    interruptions_left: int
    resources: dict[str, str] = field(default_factory=dict)
    exclude: str | None = None


@dataclass(frozen=True)
class GiveUp:
    """No further attempt, and why (``None`` for a completed attempt)."""

    reason: str | None


def decide(ended: Ended) -> Retry | GiveUp:
    """What follows an attempt that ended in ``ended.state``."""
    state, escalate = ended.state, ended.policy.escalate
    if state == JobState.COMPLETED.value:
        return GiveUp(None)
    if state == JobState.CANCELLED.value:
        return GiveUp("CANCELLED: never retried")
    if state in INTERRUPTED:
        return _interrupted(ended)
    if state == JobState.OUT_OF_MEMORY.value:
        return _escalated(ended, "memory", escalate.memory, ended.memory)
    if state == JobState.TIMEOUT.value:
        return _escalated(ended, "time", escalate.time, ended.time_limit)
    return _opted_in(ended)


def _opted_in(ended: Ended) -> Retry | GiveUp:
    total = ended.policy.retry
    if ended.retries_left <= 0:
        why = "no 'retry' opted in" if total == 0 else f"all {total} retries used"
        return GiveUp(f"{ended.state}: not retried ({why})")
    used = total - ended.retries_left + 1
    return Retry(
        f"{ended.state}: retry {used} of {total}",
        at_once=False,
        retries_left=ended.retries_left - 1,
        interruptions_left=ended.interruptions_left,
    )


def _interrupted(ended: Ended) -> Retry | GiveUp:
    total = ended.policy.on_interruption.retries
    if ended.interruptions_left <= 0:
        why = "on_interruption.retries is 0" if total == 0 else f"all {total} automatic retries used"
        return GiveUp(f"{ended.state}: not retried ({why})")
    used = total - ended.interruptions_left + 1
    reason = f"{ended.state}: retried automatically, {used} of {total}"
    exclude = ended.node if ended.policy.on_interruption.exclude_node and ended.node else None
    if exclude is not None:
        reason += f", excluding {exclude}"
    return Retry(
        reason,
        at_once=True,
        retries_left=ended.retries_left,
        interruptions_left=ended.interruptions_left - 1,
        exclude=exclude,
    )


def _escalated(ended: Ended, resource: str, rule: _Rule | None, current: str | None) -> Retry | GiveUp:
    """More ``memory`` (megabytes) or ``time`` (seconds, grown to whole minutes) under ``rule``, up to its cap."""
    if rule is None:
        return GiveUp(f"{ended.state}: not retried (no escalate.{resource} rule)")
    memory = resource == "memory"
    cap = memory_mb(rule.max) if memory else time_seconds(rule.max) or 0
    amount = None if current is None else memory_mb(current) if memory else time_seconds(current)
    if current is not None and amount is None:
        return GiveUp(f"{ended.state}: not retried (the time limit is {current})")
    if amount is not None and amount >= cap:
        return GiveUp(f"{ended.state}: not retried ({resource} {current} is at the cap {rule.max})")
    if amount is None:
        after = cap
    else:
        grown = math.ceil(amount * rule.factor)
        after = min(cap, grown if memory else math.ceil(grown / 60) * 60)
    value = format_memory(after) if memory else format_time(after)
    return Retry(
        f"{ended.state}: {resource} {current or 'the partition default'} -> {value} (x{rule.factor:g}, cap {rule.max})",
        at_once=True,
        retries_left=ended.retries_left,
        interruptions_left=ended.interruptions_left,
        resources={"memory_per_node" if memory else "time_limit": value},
    )
