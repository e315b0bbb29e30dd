"""Slurm job array ids (pure).

An array ``123`` submitted with ``--array=0-9%2`` has one id per task, ``123_4``, which is what squeue (with
``--array``), sacct and scancel take and print for a task. Tasks not started yet are also printed as one
range: squeue without ``--array`` and sacct show ``123_[5-9%2]`` (``%2``: at most two at once), or a list
such as ``123_[1,3,5-7]``. :func:`task_ids` reads every form back into task ids; :func:`checked_job_id` checks
the id a person or a client typed (:func:`is_slurm_id` an id on a Slurm command line), :func:`in_range` whether a
task belongs to a range and :func:`answers` whether a record Slurm printed is about the id asked.
"""

from __future__ import annotations

import re

from svc_host.domain.bounds import MAX_JOB_ID

# Job ids are ASCII digits (``[0-9]``, never ``\d``, which also takes other scripts' digits: ``٨٨٦``, which
# Python's int() reads as 886) without leading zeros (Slurm reads ``0886`` as job 886, which svc's store keys as
# ``886``): one spelling per job, so the id svc stores, the id on Slurm's command line and the id Slurm prints agree.
_NUMBER = r"(?:0|[1-9][0-9]*)"
_TASK = re.compile(rf"(?P<array>{_NUMBER})_(?P<task>{_NUMBER})")
_RANGE = re.compile(rf"(?P<array>{_NUMBER})_\[(?P<items>[0-9,-]+)(?:%(?P<throttle>[0-9]+))?\]")
_HET = re.compile(rf"(?P<job>{_NUMBER})\+(?P<offset>{_NUMBER})")
_ITEM = re.compile(rf"(?P<first>{_NUMBER})(?:-(?P<last>{_NUMBER}))?")
_TYPED = re.compile(r"(?P<array>[0-9]{1,20})(?:_(?P<task>[0-9]{1,20}))?")
_TYPED_RANGE = re.compile(r"(?P<array>[0-9]{1,20})_\[(?P<items>[0-9,-]{1,200})\]")
_LEADING_ZEROS = re.compile(r"(?<![0-9])0+(?=[0-9])")
_PLAIN = re.compile(_NUMBER)


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


def is_range(job_id: str) -> bool:
    """Whether ``job_id`` names several tasks of an array (``123_[1-3]``), not one job or task."""
    return _RANGE.fullmatch(job_id) is not None


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
    return [
        task_id(match["array"], index)
        for first, last in _bounds(job_id, match["items"])
        for index in range(first, last + 1)
    ]


class MisspelledJobId(ValueError):
    """A job id with digits other than 0-9 or a leading zero: Slurm would read another id than svc stores, or none;
    the message says how to write it."""


def checked_job_id(job_id: str, *, ranges: bool = False) -> str:
    """``job_id`` as typed, once it is a job id (``123``), an array task (``123_4``) or, with ``ranges``, tasks of one
    array (``123_[1-3,7]``, what ``scancel`` takes); ids run from 0 (which Slurm never gives) to :data:`MAX_JOB_ID`.
    The one check of a job id every interface (REST, MCP, the CLI) makes: digits are 0-9 and no number has a leading
    zero, so an id has the one spelling Slurm prints and svc stores.

    Raises:
        MisspelledJobId: digits other than 0-9 (Arabic-Indic ``٨٨٦``, fullwidth or superscript ones) or a leading
            zero (``0886``).
        ValueError: anything else, with the forms that are accepted.
    """
    shown = job_id if len(job_id) <= 40 else job_id[:40] + "..."
    if any(char.isdigit() and not char.isascii() for char in job_id):
        raise MisspelledJobId(
            f"job id {shown!r} has digits other than 0-9: write it in ASCII digits, as Slurm prints it"
        )
    match = _TYPED.fullmatch(job_id) or (_TYPED_RANGE.fullmatch(job_id) if ranges else None)
    if match is None or int(match["array"]) > MAX_JOB_ID:
        forms = "a non-negative integer, or <id>_<index> for an array task"
        forms += ", or <id>_[a-b] for tasks of an array" if ranges else ""
        raise ValueError(f"job id must be {forms} (ids up to {MAX_JOB_ID}), got {shown!r}")
    if _LEADING_ZEROS.search(job_id):
        respelled = _LEADING_ZEROS.sub("", job_id)
        raise MisspelledJobId(f"job id {shown!r} has a leading zero: write it as Slurm prints it, {respelled!r}")
    if "[" in job_id:
        _bounds(job_id, match["items"])
    return job_id


def is_slurm_id(job_id: str) -> bool:
    """Whether ``job_id`` is an id in a form Slurm prints and takes, spelled as it prints it: a job (``123``), an array
    task (``123_4``), tasks of an array (``123_[4-9%2]``) or a component of a heterogeneous job (``123+1``)."""
    return any(form.fullmatch(job_id) for form in (_PLAIN, _TASK, _HET)) or (
        _RANGE.fullmatch(job_id) is not None and not _LEADING_ZEROS.search(job_id)
    )


def answers(asked: str, answered: str) -> bool:
    """Whether a record Slurm printed as ``answered`` is about the job ``asked``: the same id; the range of tasks that
    holds task ``asked`` (``123_[4-9]`` for ``123_4``: tasks not started yet, or cancelled before they started); or,
    for an array's (a heterogeneous job's) own id, one of its tasks (components): ``123_4``, ``123_[5-9]``, ``123+1``.
    Anything else is another job, whatever Slurm answered."""
    return answered == asked or in_range(answered, asked) or owner_of(answered) == asked


def owner_of(job_id: str) -> str | None:
    """The job a task, a range of tasks or a component belongs to (``123_4``, ``123_[5-9]``, ``123+1`` -> ``123``);
    None for a plain id."""
    het = _HET.fullmatch(job_id)
    return het["job"] if het is not None else array_of(job_id)


def in_range(range_id: str, job_id: str) -> bool:
    """Whether task ``job_id`` (``123_5``) is one of the tasks of range ``range_id`` (``123_[1-3,5]``); no task list
    is built, so a range of a million tasks costs nothing."""
    whole, task = _RANGE.fullmatch(range_id), _TASK.fullmatch(job_id)
    if whole is None or task is None or whole["array"] != task["array"]:
        return False
    index = int(task["task"])
    return any(first <= index <= last for first, last in _bounds(range_id, whole["items"]))


def _bounds(job_id: str, items: str) -> list[tuple[int, int]]:
    found = []
    for item in items.split(","):
        bounds = _ITEM.fullmatch(item)
        if bounds is None:
            raise ValueError(f"malformed array task range {job_id!r}: {item!r} is not N or N-M")
        first = int(bounds["first"])
        last = int(bounds["last"]) if bounds["last"] is not None else first
        if last < first:
            raise ValueError(f"malformed array task range {job_id!r}: {item!r} runs backwards")
        found.append((first, last))
    return found
