"""Steering a sweep without a cluster: the failure budget's rules and messages, the spec's ``max_failures``, the
pause's compare-and-set, the jobs it holds and ``cells_held`` (SQLite and PostgreSQL), and the hold argv."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlmodel import select

from svc_host.domain.submission import JobDefinition
from svc_host.errors import InvalidRequestError
from svc_host.slurm.argv import scontrol_hold_argv
from svc_host.store.database import Store
from svc_host.store.migrations import MIGRATIONS
from svc_host.store.tables import JobRecord, WorkflowRunJob
from svc_host.sweeps import cell_moves, steering
from svc_host.sweeps import store as repo
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.status import Counters, budget_message, failure_message, over_budget, stops_launching
from tests.unit.sweeps.test_store import NOW, assert_counters_match, new_sweep


@pytest.mark.parametrize(
    ("failed", "max_failures", "spent"),
    [(0, None, False), (9, None, False), (0, 0, False), (1, 0, True), (2, 2, False), (3, 2, True)],
)
def test_the_budget_is_spent_past_max_failures(failed: int, max_failures: int | None, spent: bool) -> None:
    counts = Counters(failed=failed, pending=1)
    assert over_budget(counts, max_failures) is spent
    assert stops_launching(counts, fail_fast=False, cancel_requested=False, max_failures=max_failures) is spent


def test_a_pause_stops_launching_and_nothing_else_does_without_a_reason() -> None:
    counts = Counters(pending=3, running=1)
    assert not stops_launching(counts, fail_fast=False, cancel_requested=False, max_failures=2)
    assert stops_launching(counts, fail_fast=False, cancel_requested=False, paused=True)


def test_the_budget_messages() -> None:
    counts = Counters(failed=3, cancelled=5)
    assert budget_message(counts, 8, 2) == (
        "stopped: 3 of 8 cells failed, more than max_failures 2; the cells left were cancelled"
    )
    first = ("c1", "job 'a' ended FAILED (exit code 1)")
    assert failure_message(counts, 8, first, max_failures=2) == (
        "stopped: 3 of 8 cells failed, more than max_failures 2; the cells left were cancelled; first: cell c1: "
        "job 'a' ended FAILED (exit code 1)"
    )
    assert failure_message(counts, 8, first, max_failures=5) == (
        "3 of 8 cells failed; first: cell c1: job 'a' ended FAILED (exit code 1)"
    )


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ({"fail_fast": True, "max_failures": 0}, "invalid sweep spec: give fail_fast or max_failures, not both"),
        ({"max_failures": -1}, "invalid sweep spec: max_failures: Input should be greater than or equal to 0"),
        ({"max_failures": 1001}, "invalid sweep spec: max_failures: Input should be less than or equal to 1000"),
        ({"max_failures": True}, "invalid sweep spec: max_failures: Input should be a valid integer"),
        ({"max_failures": "2"}, "invalid sweep spec: max_failures: Input should be a valid integer"),
    ],
)
def test_a_bad_max_failures_is_refused(raw: dict[str, object], error: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_sweep({"matrix": {"a": [1, 2]}, **raw})
    assert str(caught.value).startswith(error)


def test_max_failures_defaults_to_never_stop() -> None:
    assert parse_sweep({"matrix": {"a": [1]}}).max_failures is None
    assert parse_sweep({"matrix": {"a": [1]}, "max_failures": 0}).max_failures == 0


@pytest.fixture
def store(database_url: str) -> Store:
    return Store(database_url)


def launch(store: Store, sweep_id: int, run_ids: list[str], job_ids: list[str]) -> None:
    """The cells submitted (one job each, ``PENDING`` in the job table) and running."""
    store.call(cell_moves.move_cells, sweep_id, run_ids, "submitting", only_from=["pending"], owner="me")
    rows = store.call(lambda s: {j.run_id: j for j in s.exec(select(WorkflowRunJob))})
    tasks = [
        cell_moves.ArrayCell(run_id, rows[run_id].id or 0, i, JobDefinition(name="a", command="true"), "o", "e")
        for i, run_id in enumerate(run_ids)
    ]
    store.call(cell_moves.finish_array, sweep_id, transport="local", array_job_id="9", cells=tasks, now=NOW)
    store.call(cell_moves.move_cells, sweep_id, run_ids, "running", only_from=["submitting"])
    assert store.call(lambda s: sorted(r.job_id for r in s.exec(select(JobRecord)))) == sorted(job_ids)


def set_state(store: Store, job_id: str, state: str) -> None:
    def write(session: object) -> None:
        record = session.exec(select(JobRecord).where(JobRecord.job_id == job_id)).one()  # type: ignore[attr-defined]
        record.state = state
        session.add(record)  # type: ignore[attr-defined]

    store.call(write)


def test_pause_and_resume_are_compare_and_set_and_count_the_held_cells(store: Store) -> None:
    sweep_id = new_sweep(store, 4)
    cells = [cell.id for cell in sorted(store.call(repo.cells, sweep_id), key=lambda c: (c.started_at, c.id))]
    launch(store, sweep_id, cells[:3], ["9_0", "9_1", "9_2"])
    set_state(store, "9_0", "RUNNING")
    assert store.call(steering.queued_jobs, sweep_id) == ["9_1", "9_2"]
    assert store.call(repo.recounted, sweep_id).cells_held == 0  # type: ignore[union-attr]  # not paused

    first = store.call(steering.set_paused, sweep_id, True)
    assert first.changed
    assert first.sweep is not None
    assert first.sweep.paused_at is not None
    assert (first.sweep.cells_held, first.sweep.cells_pending, first.sweep.cells_running) == (2, 1, 3)
    again = store.call(steering.set_paused, sweep_id, True)
    assert not again.changed
    assert again.sweep is not None
    assert again.sweep.paused_at == first.sweep.paused_at
    set_state(store, "9_1", "CANCELLED")
    store.call(cell_moves.move_cells, sweep_id, [cells[1]], "cancelled", only_from=["running"])
    assert store.call(repo.get_sweep, sweep_id).cells_held == 1  # type: ignore[union-attr]  # recounted with the cell
    assert_counters_match(store, sweep_id)

    resumed = store.call(steering.set_paused, sweep_id, False)
    assert resumed.changed
    assert resumed.sweep is not None
    assert (resumed.sweep.paused_at, resumed.sweep.cells_held) == (None, 0)
    assert not store.call(steering.set_paused, sweep_id, False).changed
    store.close()


def test_cancel_and_the_end_of_a_sweep_end_its_pause(store: Store) -> None:
    sweep_id = new_sweep(store, 2)
    store.call(steering.set_paused, sweep_id, True)
    outcome = store.call(cell_moves.request_cancel, sweep_id)
    assert outcome.sweep is not None
    assert (outcome.sweep.status, outcome.sweep.paused_at, outcome.sweep.cells_held) == ("draining", None, 0)
    refused = store.call(steering.set_paused, sweep_id, True)
    assert not refused.changed  # being cancelled: no pause
    assert store.call(cell_moves.move_status, sweep_id, "draining", "cancelled")
    assert not store.call(steering.set_paused, sweep_id, False).changed
    ended = new_sweep(store, 1)
    store.call(steering.set_paused, ended, True)
    assert store.call(cell_moves.move_status, ended, "pending", "failed")
    assert store.call(repo.get_sweep, ended).paused_at is None  # type: ignore[union-attr]
    assert store.call(steering.set_paused, 999, True).sweep is None
    store.close()


def test_the_budget_reason_is_noted_once(store: Store) -> None:
    sweep_id = new_sweep(store, 2)
    assert store.call(steering.note_stop, sweep_id, "stopped: first")
    assert not store.call(steering.note_stop, sweep_id, "stopped: second")
    assert store.call(repo.get_sweep, sweep_id).error == "stopped: first"  # type: ignore[union-attr]
    store.close()


def test_the_hold_argv() -> None:
    assert scontrol_hold_argv(["12", "13_4"]) == ["scontrol", "uhold", "12", "13_4"]
    assert scontrol_hold_argv(["12"], release=True) == ["scontrol", "release", "12"]
    for bad in ([], ["12; rm -rf /"], ["-x"]):
        with pytest.raises(ValueError, match="job id"):
            scontrol_hold_argv(bad)


def test_a_sweep_from_before_steering_gets_its_columns(database_url: str) -> None:
    """A database at the version before the steering migration, with a sweep in it: upgraded, the sweep reads not
    paused, no budget, nothing held."""
    first = Store(database_url)
    sweep_id = new_sweep(first, 2)
    before = next(  # the version just before the steering migration (later ones run again: they repeat safely)
        version
        for version, steps in enumerate(MIGRATIONS)
        if any(getattr(step, "__name__", "") == "_add_sweep_steering" for step in steps)
    )
    with first.engine.begin() as conn:
        for column in ("max_failures", "paused_at", "cells_held"):
            conn.execute(text(f"ALTER TABLE sweep_run DROP COLUMN {column}"))
        conn.execute(text("UPDATE schema_version SET version = :v"), {"v": before})
    first.close()
    again = Store(database_url)
    sweep = again.call(repo.get_sweep, sweep_id)
    assert sweep is not None
    assert (sweep.max_failures, sweep.paused_at, sweep.cells_held, sweep.cells_pending) == (None, None, 0, 2)
    assert again.call(steering.set_paused, sweep_id, True).changed
    again.close()
