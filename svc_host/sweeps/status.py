"""A sweep's status from its cell counters (pure).

``pending`` (no cell started yet) -> ``running`` (some cell started) -> ``completed`` | ``failed`` once every
cell is terminal; a cancel request makes it ``draining`` (pending cells are cancelled, running ones are
cancelled in the scheduler) and ``cancelled`` once every cell is terminal. The rules where the REST spec is
silent:

* ``failed``: every cell is terminal and at least one cell failed (``fail_fast`` or not).
* ``completed``: every cell is terminal, none failed and at least one completed; cells cancelled one by one
  (through the workflow-run cancel endpoint) do not fail a sweep.
* ``cancelled`` without a sweep cancel: every cell was cancelled one by one.
* ``fail_fast``: once a cell has failed no new cell is launched; launched cells run to their end and the
  cells not launched yet are cancelled (counted ``cells_cancelled``). The sweep stays ``running`` (it was not
  cancelled: ``cancel_requested_at`` stays null) and ends ``failed``.
* ``max_failures`` N (the failure budget): once more than N cells have failed no new cell is launched, the
  cells not launched yet are cancelled and so are the launched ones (their jobs are cancelled). The sweep's
  ``error`` says so at once, it stays ``running`` until every cell has ended and ends ``failed``.
* A pause (``paused_at``) is not a status: a paused sweep keeps its status (``pending`` or ``running``), launches
  no cell and holds its cells' queued jobs until it is resumed; it can still be cancelled, and its budget still
  applies.
* A status never goes back, and a terminal status is final.
"""

from __future__ import annotations

from dataclasses import dataclass

PENDING, RUNNING, DRAINING = "pending", "running", "draining"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
STATES = (PENDING, RUNNING, DRAINING, COMPLETED, FAILED, CANCELLED)


@dataclass(frozen=True)
class Counters:
    """How many cells are in each state (in flight = ``syncing``, ``submitting`` or ``running``)."""

    pending: int = 0
    running: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0

    @property
    def total(self) -> int:
        return self.pending + self.running + self.terminal

    @property
    def terminal(self) -> int:
        return self.completed + self.failed + self.cancelled

    @property
    def started(self) -> int:
        """Cells that were launched (a cell cancelled before its launch is not counted)."""
        return self.running + self.completed + self.failed


def derive(current: str, counters: Counters, cell_count: int, *, cancel_requested: bool) -> str:
    """The status a sweep in ``current`` should have now."""
    if current in TERMINAL:
        return current
    if counters.terminal >= cell_count:
        return _outcome(counters, cancel_requested=cancel_requested)
    if cancel_requested:
        return DRAINING
    return PENDING if current == PENDING and not counters.started else RUNNING


def _outcome(counters: Counters, *, cancel_requested: bool) -> str:
    if cancel_requested:
        return CANCELLED
    if counters.failed:
        return FAILED
    return COMPLETED if counters.completed else CANCELLED


def over_budget(counters: Counters, max_failures: int | None) -> bool:
    """Whether more cells have failed than the sweep's failure budget allows (never without a budget)."""
    return max_failures is not None and counters.failed > max_failures


def stops_launching(
    counters: Counters,
    *,
    fail_fast: bool,
    cancel_requested: bool,
    max_failures: int | None = None,
    paused: bool = False,
) -> bool:
    """Whether no new cell may be launched now: the sweep was cancelled or is paused, ``fail_fast`` and a cell
    failed, or the failure budget is spent."""
    return cancel_requested or paused or (fail_fast and counters.failed > 0) or over_budget(counters, max_failures)


def budget_message(counters: Counters, cell_count: int, max_failures: int) -> str:
    """Why a sweep over its failure budget stopped."""
    return (
        f"stopped: {counters.failed} of {cell_count} cells failed, more than max_failures {max_failures}; "
        "the cells left were cancelled"
    )


def free_slots(max_parallel: int, in_flight: int) -> int:
    """How many more cells may be launched now."""
    return max(0, max_parallel - in_flight)


def failure_message(
    counters: Counters, cell_count: int, first: tuple[str, str | None] | None, *, max_failures: int | None = None
) -> str:
    """The ``error`` of a failed sweep: how many cells failed (and that the budget stopped it) and why the first
    one did."""
    message = f"{counters.failed} of {cell_count} cells failed"
    if max_failures is not None and over_budget(counters, max_failures):
        message = budget_message(counters, cell_count, max_failures)
    if first is not None:
        cell, error = first
        message += f"; first: cell {cell}" + (f": {error}" if error else "")
    return message
