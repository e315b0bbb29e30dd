"""Bounds shared by the routers' parameters, and the error statuses a route declares in the OpenAPI.

Every integer a client sends is bounded where it is declared (``Query``/``Path``/``Field`` with ``ge``/``le``),
so the OpenAPI shows the range and an out-of-range value is a 422 before any route runs: nothing a client
sends can overflow SQLite's 64-bit integers, a file offset or a JavaScript number. A job id is the exception:
``{job_id}`` is a string (``123``, ``123_4`` for an array task, ``123_[1-3]`` for tasks of an array where a route
takes several), checked by :data:`JobId`/:data:`JobIds` so that a bad one is a 400 as the spec says of a negative id;
the check (:func:`~svc_host.slurm.arrays.checked_job_id`) is the one MCP and the CLI make, and takes one spelling
per job (digits 0-9, no leading zero), the one Slurm prints and the store keys.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Depends, Path
from pydantic import BaseModel

from svc_host.domain.bounds import MAX_JOB_ID, MAX_OFFSET, MAX_ROW_ID, MAX_SAFE_INTEGER
from svc_host.errors import InvalidRequestError, NotFoundError
from svc_host.slurm.arrays import array_of, checked_job_id

__all__ = [
    "MAX_JOB_ID",
    "MAX_OFFSET",
    "MAX_ROW_ID",
    "MAX_SAFE_INTEGER",
    "ErrorBody",
    "JobId",
    "JobIds",
    "SyncErrorBody",
    "error_responses",
    "sync_error_responses",
]


def _job_id(job_id: str, *, ranges: bool) -> str:
    try:
        checked = checked_job_id(job_id, ranges=ranges)
    except ValueError as exc:
        raise InvalidRequestError(str(exc)) from None
    if int(array_of(checked) or checked) == 0:  # Slurm numbers jobs from 1: scontrol says "not found", so do we
        raise NotFoundError(f"job {checked} not found: Slurm job ids start at 1")
    return checked


def _one_job(
    job_id: str = Path(
        max_length=64,
        description="A Slurm job id (`123`) or an array task (`123_4`), in digits 0-9 without a leading zero. Anything "
        "else is 400; id 0 is 404.",
        examples=["123", "123_4"],
    ),
) -> str:
    return _job_id(job_id, ranges=False)


def _jobs(
    job_id: str = Path(
        max_length=64,
        description="A Slurm job id (`123`: a whole array too), an array task (`123_4`) or tasks of an array "
        "(`123_[1-3,7]`), in digits 0-9 without a leading zero. Anything else is 400; id 0 is 404.",
        examples=["123", "123_4", "123_[1-3]"],
    ),
) -> str:
    return _job_id(job_id, ranges=True)


JobId = Annotated[str, Depends(_one_job)]
"""``{job_id}`` of a route about one job: ``123`` or ``123_4``, checked (400 for anything else)."""
JobIds = Annotated[str, Depends(_jobs)]
"""``{job_id}`` of a route that can act on several tasks of an array (cancel): also ``123_[1-3]``."""


class FieldProblem(BaseModel):
    """One field's problem in words (``field`` a dotted path, ``""`` for the request as a whole)."""

    field: str
    message: str


class ErrorBody(BaseModel):
    """Every error body: ``{detail}``, with ``errors`` when the request was checked field by field (every 422 of
    FastAPI's own validation, and svc's checks that name fields)."""

    detail: str
    errors: list[FieldProblem] | None = None


class SyncErrorBody(ErrorBody):
    """A sync's 502: ``remedy`` names the flag that lets a refusal through (another machine's mount: ``force``;
    a first mirror into a directory holding files svc never synced: ``adopt``); absent for other failures."""

    remedy: Literal["force", "adopt"] | None = None


_MEANING = {
    400: "invalid input",
    401: "missing or wrong API token",
    403: "path outside the mount, or permission denied",
    404: "not found",
    409: "already exists",
    413: "too large",
    429: "too many attempts; see Retry-After",
    422: "validation error, or a state that does not allow this",
    500: "a job script could not be rendered, or a file could not be written",
    502: "a scheduler, synchronisation or submission command failed",
    503: "no SSH profile configured, or a tool or plugin missing",
}


def error_responses(*statuses: int, **meanings: str) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: each status with the ``{detail}`` body; ``meanings`` as ``e503="..."``
    say what the status means for that route."""
    return {
        status: {"model": ErrorBody, "description": meanings.get(f"e{status}", _MEANING[status])} for status in statuses
    }


def sync_error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` of a sync route: its 502 body is :class:`SyncErrorBody`."""
    responses = error_responses(
        *statuses, 502, e502="the sync failed, or was refused changing nothing (`remedy` says which flag overrides it)"
    )
    responses[502]["model"] = SyncErrorBody
    return responses
