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


def stops_launching(counters: Counters, *, fail_fast: bool, cancel_requested: bool) -> bool:
    """Whether no new cell may be launched: the sweep was cancelled, or ``fail_fast`` and a cell failed."""
    return cancel_requested or (fail_fast and counters.failed > 0)


def free_slots(max_parallel: int, in_flight: int) -> int:
    """How many more cells may be launched now."""
    return max(0, max_parallel - in_flight)


def failure_message(counters: Counters, cell_count: int, first: tuple[str, str | None] | None) -> str:
    """The ``error`` of a failed sweep: how many cells failed and why the first one did."""
    message = f"{counters.failed} of {cell_count} cells failed"
    if first is not None:
        cell, error = first
        message += f"; first: cell {cell}" + (f": {error}" if error else "")
    return message
