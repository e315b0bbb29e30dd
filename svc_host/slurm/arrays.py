"""Slurm job array ids (pure).

An array ``123`` submitted with ``--array=0-9%2`` has one id per task, ``123_4``, which is what squeue (with
``--array``), sacct and scancel take and print for a task. Tasks not started yet are also printed as one
range: squeue without ``--array`` and sacct show ``123_[5-9%2]`` (``%2``: at most two at once), or a list
such as ``123_[1,3,5-7]``. :func:`task_ids` reads every form back into task ids.
"""

from __future__ import annotations

import re

_TASK = re.compile(r"(?P<array>\d+)_(?P<task>\d+)")
_RANGE = re.compile(r"(?P<array>\d+)_\[(?P<items>[\d,-]+)(?:%(?P<throttle>\d+))?\]")
_ITEM = re.compile(r"(?P<first>\d+)(?:-(?P<last>\d+))?")


def array_flag(count: int, max_parallel: int) -> str:
    """``--array`` value for tasks ``0`` to ``count - 1``, at most ``max_parallel`` running at once."""
    if count < 1 or max_parallel < 1:
        raise ValueError(f"an array needs at least one task and one running at once, not {count} and {max_parallel}")
    return f"0-{count - 1}%{max_parallel}"


def task_id(array_job_id: str, index: int) -> str:
    """The id of task ``index`` of array ``array_job_id``: ``123_4``."""
    return f"{array_job_id}_{index}"


def array_of(job_id: str) -> str | None:
    """The array's own id in a task id or a range (``123_4``, ``123_[5-9%2]`` -> ``123``); None for a plain id."""
    match = _TASK.fullmatch(job_id) or _RANGE.fullmatch(job_id)
    return match["array"] if match is not None else None


def task_ids(job_id: str) -> list[str]:
    """Every task id a squeue or sacct id stands for: ``123_[5-7%2]`` -> ``123_5, 123_6, 123_7``; a task id or a
    plain job id stands for itself.

    Raises:
        ValueError: a range that is malformed or runs backwards.
    """
    match = _RANGE.fullmatch(job_id)
    if match is None:
        if "[" in job_id:
            raise ValueError(f"malformed array task range {job_id!r}: expected such as '123_[5-9%2]'")
        return [job_id]
    found: list[str] = []
    for item in match["items"].split(","):
        bounds = _ITEM.fullmatch(item)
        if bounds is None:
            raise ValueError(f"malformed array task range {job_id!r}: {item!r} is not N or N-M")
        first = int(bounds["first"])
        last = int(bounds["last"]) if bounds["last"] is not None else first
        if last < first:
            raise ValueError(f"malformed array task range {job_id!r}: {item!r} runs backwards")
        found.extend(task_id(match["array"], index) for index in range(first, last + 1))
    return found
