"""Parsers of the single values Slurm prints in its fields: durations and time limits, epoch times, and the GPUs in
a GRES or TRES string. Pure and cached where a queue repeats the same few values.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import Final

from svc_host.errors import SlurmParseError

_NO_TIME: Final = frozenset({"", "UNKNOWN", "NONE", "N/A"})
_NO_DURATION: Final = frozenset({"", "N/A", "INVALID", "NOT_SET", "NONE", "PARTITION_LIMIT"})
_UNLIMITED: Final = frozenset({"UNLIMITED", "INFINITE"})
_DURATION = re.compile(r"(?:(?P<days>\d+)-)?(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?(?:\.\d+)?")
_PARENS = re.compile(r"\([^)]*\)")


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def parse_duration(text: str) -> int | None:
    """Seconds in one of Slurm's time forms; ``None`` when Slurm says there is no such time.

    ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS`` (also the input forms ``M``, ``D-HH``, ``D-HH:MM``).
    ``UNLIMITED``, ``INVALID``, ``N/A``, ``Partition_Limit`` and empty text are ``None``.

    Raises:
        SlurmParseError: the text is none of those.
    """
    text = text.strip()
    if text.upper() in _NO_DURATION | _UNLIMITED:
        return None
    match = _DURATION.fullmatch(text)
    if match is None:
        msg = f"unexpected duration {text!r}: expected a Slurm time such as '1-02:03:04' or 'UNLIMITED'"
        raise SlurmParseError(msg)
    parts = [int(match[key]) for key in ("a", "b", "c") if match[key] is not None]
    if match["days"] is not None:  # D-H, D-H:M, D-H:M:S
        hours, minutes, seconds = [*parts, 0, 0][:3]
        return ((int(match["days"]) * 24 + hours) * 60 + minutes) * 60 + seconds
    if len(parts) == 3:  # H:M:S
        return (parts[0] * 60 + parts[1]) * 60 + parts[2]
    minutes, seconds = [*parts, 0][:2]  # M, M:S
    return minutes * 60 + seconds


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def parse_epoch(text: str) -> datetime | None:
    """A time sacct printed under ``SLURM_TIME_FORMAT=%s`` (Unix seconds) as an aware UTC datetime.

    ``Unknown`` (not started or not ended yet), ``None`` and empty text are ``None``.

    Raises:
        SlurmParseError: the text is none of those.
    """
    text = text.strip()
    if text.upper() in _NO_TIME:
        return None
    if not text.isdigit():
        msg = f"unexpected time {text!r}: expected Unix seconds (sacct under SLURM_TIME_FORMAT=%s) or 'Unknown'"
        raise SlurmParseError(msg)
    return datetime.fromtimestamp(int(text), UTC)


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def format_time_limit(text: str) -> str | None:
    """Spell a time limit as ``[D-]HH:MM:SS`` or ``UNLIMITED``, whichever command printed it; ``None`` if unset."""
    if text.strip().upper() in _UNLIMITED:
        return "UNLIMITED"
    seconds = parse_duration(text)
    return None if seconds is None else spell_time_limit(seconds)


NO_LIMIT: Final = 0
"""A time limit of no limit, in seconds, as Slurm itself takes it (``--time=0``): UNLIMITED and INFINITE read as it."""
NO_LIMIT_SECONDS: Final = 365 * 86400
"""What accounting may record as the time limit of a job that has none: when the partition's MaxTime is
UNLIMITED and backfill (rather than the main scheduler) starts the job, Slurm gives it 365 days (``YEAR_MINUTES``);
a job started by the main scheduler keeps ``UNLIMITED``. Both mean the job asked for no limit."""


def limit_seconds(text: str) -> int | None:
    """A time limit in seconds: ``UNLIMITED``, ``INFINITE`` and :data:`NO_LIMIT_SECONDS` as :data:`NO_LIMIT`;
    ``None`` when unset or unknown."""
    if text.strip().upper() in _UNLIMITED:
        return NO_LIMIT
    seconds = parse_duration(text)
    return NO_LIMIT if seconds == NO_LIMIT_SECONDS else seconds


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def format_job_time_limit(text: str) -> str | None:
    """A job's time limit as squeue, scontrol or sacct printed it, spelled as :func:`format_time_limit` does,
    except that :data:`NO_LIMIT_SECONDS` (``365-00:00:00``, Slurm's stand-in for a job with no limit that
    backfill started) is ``UNLIMITED``: a user reads the limit the job asked for, as svc's own records say it."""
    seconds = limit_seconds(text)
    return None if seconds is None else spell_time_limit(seconds)


def spell_time_limit(seconds: int) -> str:
    """Seconds as Slurm spells a time limit: ``[D-]HH:MM:SS`` (``90061`` is ``1-01:01:01``), ``UNLIMITED`` for
    :data:`NO_LIMIT`."""
    if seconds == NO_LIMIT:
        return "UNLIMITED"
    days, rest = divmod(seconds, 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def gpus_in_gres(text: str) -> int:
    """GPUs in a GRES string: ``gpu:4``, ``gpu:tesla:4(S:0)``, ``gres/gpu:2``, ``gres:gpu``.

    Non-GPU resources (``mps:100``) and ``(null)``/``N/A`` count 0; a ``gpu`` without count is 1.
    """
    total = 0
    for raw_item in _PARENS.sub("", text).split(","):
        item = raw_item.strip().removeprefix("gres:").removeprefix("gres/")
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        total += int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
    return total


@functools.lru_cache(maxsize=4096)
def gpu_types_in_gres(text: str) -> tuple[tuple[str, int], ...]:
    """GPUs per type in a node's GRES (``Gres``/``GresUsed``), in the order Slurm lists them.

    ``gpu:a100:2(S:0),gpu:v100:2`` -> ``(("a100", 2), ("v100", 2))``; MIG-style names are types like any other
    (``gpu:a100_3g.20gb:7``); ``(IDX:0-1)`` and socket hints are dropped; an untyped ``gpu:4`` (or 22.05's
    ``gpu:(null):4``) has the type ``""``. A type listed twice is summed.
    """
    found: dict[str, int] = {}
    for raw_item in _PARENS.sub("", text).split(","):
        parts = raw_item.strip().removeprefix("gres:").removeprefix("gres/").split(":")
        if parts[0] != "gpu":
            continue
        count = int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
        kind = parts[1] if len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()) else ""
        found[kind] = found.get(kind, 0) + count
    return tuple(found.items())


@functools.lru_cache(maxsize=4096)
def gpu_types_in_tres(text: str) -> tuple[tuple[str, int], ...]:
    """GPUs per type in a TRES string (``gres/gpu=3,gres/gpu:a100=2,gres/gpu:v100=1`` -> a100 2, v100 1); GPUs
    the typed entries do not account for (an untyped request) have the type ``""``."""
    total = gpus_in_tres(text)
    found: dict[str, int] = {}
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        if key.startswith("gres/gpu:") and value.isdigit():
            found[key.removeprefix("gres/gpu:")] = found.get(key.removeprefix("gres/gpu:"), 0) + int(value)
    rest = total - sum(found.values())
    return tuple(found.items()) + ((("", rest),) if rest > 0 else ())


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def gpus_in_tres(text: str) -> int:
    """GPUs in a TRES string such as ``cpu=2,mem=1G,node=1,gres/gpu=4,gres/gpu:tesla=4``.

    Slurm lists typed GPUs next to the untyped total; the total wins so they are not counted twice.
    """
    untyped = typed = 0
    seen_untyped = False
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        if not value.isdigit():
            continue
        if key == "gres/gpu":
            untyped += int(value)
            seen_untyped = True
        elif key.startswith("gres/gpu:"):
            typed += int(value)
    return untyped if seen_untyped else typed
