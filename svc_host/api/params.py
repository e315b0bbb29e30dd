"""Bounds shared by the routers' parameters, and the error statuses a route declares in the OpenAPI.

Every integer a client sends is bounded where it is declared (``Query``/``Path``/``Field`` with ``ge``/``le``),
so the OpenAPI shows the range and an out-of-range value is a 422 before any route runs: nothing a client
sends can overflow SQLite's 64-bit integers, a file offset or a JavaScript number.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from svc_host.domain.submission import MAX_JOB_ID

__all__ = ["MAX_JOB_ID", "MAX_OFFSET", "MAX_ROW_ID", "MAX_SAFE_INTEGER", "ErrorBody", "error_responses"]

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a JSON client (the dashboard's JavaScript) reads exactly; far below SQLite's 2**63."""
MAX_ROW_ID = MAX_SAFE_INTEGER
"""Store row ids (sweep ids, history ids)."""
MAX_OFFSET = MAX_SAFE_INTEGER
"""Byte and row offsets."""


class ErrorBody(BaseModel):
    """Every error body: ``{detail}``."""

    detail: str


_MEANING = {
    400: "invalid input",
    403: "path outside the mount, or permission denied",
    404: "not found",
    409: "already exists",
    413: "too large",
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
