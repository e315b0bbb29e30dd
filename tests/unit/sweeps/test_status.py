"""The sweep status rules (pure)."""

from __future__ import annotations

import pytest

from svc_host.sweeps.status import Counters, derive, failure_message, free_slots, stops_launching


@pytest.mark.parametrize(
    ("current", "counts", "cancel", "expected"),
    [
        ("pending", Counters(pending=9), False, "pending"),
        ("pending", Counters(pending=8, running=1), False, "running"),
        ("pending", Counters(pending=8, cancelled=1), False, "pending"),  # a cell cancelled before it started
        ("running", Counters(pending=8, cancelled=1), False, "running"),  # never back to pending
        ("running", Counters(completed=9), False, "completed"),
        ("running", Counters(completed=7, cancelled=2), False, "completed"),  # cells cancelled one by one
        ("running", Counters(completed=8, failed=1), False, "failed"),
        ("running", Counters(failed=1, cancelled=8), False, "failed"),  # fail_fast: the rest never started
        ("running", Counters(cancelled=9), False, "cancelled"),  # every cell cancelled one by one
        ("pending", Counters(pending=9), True, "draining"),
        ("draining", Counters(running=2, cancelled=7), True, "draining"),
        ("draining", Counters(completed=1, failed=1, cancelled=7), True, "cancelled"),
        ("completed", Counters(completed=9), True, "completed"),  # terminal is final
        ("cancelled", Counters(running=1, cancelled=8), True, "cancelled"),
    ],
)
def test_derive(current: str, counts: Counters, cancel: bool, expected: str) -> None:
    assert counts.total == 9
    assert derive(current, counts, 9, cancel_requested=cancel) == expected


def test_launching_stops_on_cancel_or_a_failure_with_fail_fast() -> None:
    healthy, failing = Counters(pending=3, running=1), Counters(pending=3, failed=1)
    assert not stops_launching(healthy, fail_fast=True, cancel_requested=False)
    assert not stops_launching(failing, fail_fast=False, cancel_requested=False)
    assert stops_launching(failing, fail_fast=True, cancel_requested=False)
    assert stops_launching(healthy, fail_fast=False, cancel_requested=True)


def test_free_slots() -> None:
    assert [free_slots(4, n) for n in (0, 3, 4, 6)] == [4, 1, 0, 0]


def test_failure_message() -> None:
    counts = Counters(completed=7, failed=2)
    assert failure_message(counts, 9, None) == "2 of 9 cells failed"
    assert failure_message(counts, 9, ("c1", "job 'a' ended FAILED (exit code 3)")) == (
        "2 of 9 cells failed; first: cell c1: job 'a' ended FAILED (exit code 3)"
    )
