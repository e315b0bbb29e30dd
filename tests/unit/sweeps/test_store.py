"""The sweep repository on a real SQLite store: one transaction for the sweep and its cells, exact counters
(also under concurrent transitions from several threads), launch order, drain, cancel, ownership."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import select

from svc_host.domain.submission import JobDefinition
from svc_host.domain.times import as_utc as utc
from svc_host.store.database import Store
from svc_host.store.tables import WorkflowRunJob, WorkflowRunRecord
from svc_host.sweeps import store as repo
from svc_host.sweeps.store import SWEEP_LEASES
from svc_host.workflows import store as runs
from svc_host.workflows.plan import RUN_STATES

NOW = datetime(2026, 1, 1, tzinfo=UTC)
BUCKET = {"pending": "cells_pending", "completed": "cells_completed", "failed": "cells_failed"}
BUCKET |= {"cancelled": "cells_cancelled"} | dict.fromkeys(repo.IN_FLIGHT, "cells_running")
LAUNCHER = {"owner": "launcher", "lease_until": NOW + timedelta(seconds=30)}
"""The sweep's owner claiming the cells it launches (``next_cells``)."""


@pytest.fixture
def store(database_url: str) -> Store:
    return Store(database_url)


def new_sweep(store: Store, cells: int, *, max_parallel: int = 2, fail_fast: bool = False) -> int:
    job = runs.NewJob("a", [], JobDefinition(name="a", command="true", work_dir="/w"), retry=0, retry_delay=5)
    made = [runs.NewRun("wf", "/wf.yaml", {"i": i}, {}, "local", None, [], [job]) for i in range(cells)]
    sweep = repo.NewSweep("wf", "/wf.yaml", {"i": list(range(cells))}, {}, fail_fast, max_parallel, "web", "local")
    record = store.call(repo.insert_sweep, sweep, made, now=NOW)
    assert record.id is not None
    return record.id


def cell_ids(store: Store, sweep_id: int) -> list[str]:
    return [cell.id for cell in store.call(repo.cells, sweep_id)]


def assert_counters_match(store: Store, sweep_id: int) -> None:
    sweep = store.call(repo.get_sweep, sweep_id)
    assert sweep is not None
    real = Counter(BUCKET[cell.status] for cell in store.call(repo.cells, sweep_id))
    assert {name: getattr(sweep, name) for name in repo.COUNTED} == {name: real[name] for name in repo.COUNTED}
    assert repo.counters(sweep).total == sweep.cell_count


def test_the_sweep_and_its_cells_are_written_together(store: Store) -> None:
    sweep_id = new_sweep(store, 5)
    sweep = store.call(repo.get_sweep, sweep_id)
    assert sweep is not None
    assert (sweep.status, sweep.cell_count, sweep.cells_pending, sweep.submission_source) == ("pending", 5, 5, "web")
    cells = store.call(repo.cells, sweep_id)
    assert [(c.status, c.triggered_by, c.sweep_id) for c in cells] == [("pending", "web", sweep_id)] * 5
    assert [c.args for c in cells] == [f'{{"i": {i}}}' for i in range(5)]  # matrix order


def test_a_failing_cell_writes_nothing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    real = runs.insert_run
    calls: list[str] = []

    def insert(*args: Any, **kwargs: Any) -> WorkflowRunRecord:
        calls.append(kwargs["run_id"])
        if len(calls) == 3:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "insert_run", insert)
    with pytest.raises(RuntimeError, match="disk full"):
        new_sweep(store, 4)
    assert store.call(repo.list_sweeps) == []
    assert store.call(lambda session: list(session.exec(select(WorkflowRunRecord)))) == []


def test_status_changes_recount_in_their_transaction(store: Store) -> None:
    sweep_id = new_sweep(store, 4)
    first, second, third, _ = cell_ids(store, sweep_id)
    store.call(runs.set_run_status, first, "syncing")
    store.call(runs.set_run_status, second, "running")
    store.call(runs.set_run_status, third, "failed")
    store.call(runs.set_run_status, first, "completed")
    sweep = store.call(repo.get_sweep, sweep_id)
    assert sweep is not None
    assert repo.counters(sweep) == repo.Counters(pending=1, running=1, completed=1, failed=1)
    assert_counters_match(store, sweep_id)


def test_next_cells_keeps_max_parallel_in_flight_in_matrix_order(store: Store) -> None:
    sweep_id = new_sweep(store, 5, max_parallel=2)
    ids = cell_ids(store, sweep_id)
    chosen = store.call(repo.next_cells, sweep_id, set(), **LAUNCHER)
    assert chosen == ids[:2]
    leases = {run.id: (run.owner, utc(run.lease_until)) for run in store.call(repo.cells, sweep_id)}
    assert [leases[run_id] for run_id in ids] == [("launcher", LAUNCHER["lease_until"])] * 2 + [(None, None)] * 3
    assert store.call(repo.next_cells, sweep_id, set(chosen), **LAUNCHER) == []  # both still being launched
    store.call(runs.set_run_status, ids[0], "running")
    assert store.call(repo.next_cells, sweep_id, {ids[1]}, **LAUNCHER) == []  # one running, one launching
    store.call(runs.set_run_status, ids[0], "completed")
    assert store.call(repo.next_cells, sweep_id, {ids[1]}, **LAUNCHER) == [ids[2]]


def test_drain_cancels_pending_cells_and_their_jobs(store: Store) -> None:
    sweep_id = new_sweep(store, 4)
    ids = cell_ids(store, sweep_id)
    store.call(runs.set_run_status, ids[0], "running")
    assert store.call(repo.drain_pending, sweep_id, "not started: test", keep={ids[1]}) == 2
    statuses = {cell.id: (cell.status, cell.error) for cell in store.call(repo.cells, sweep_id)}
    assert statuses[ids[1]] == ("pending", None)
    assert statuses[ids[2]] == statuses[ids[3]] == ("cancelled", "not started: test")
    jobs = store.call(lambda session: list(session.exec(select(WorkflowRunJob).where(WorkflowRunJob.run_id == ids[2]))))
    assert [job.status for job in jobs] == ["CANCELLED"]
    assert_counters_match(store, sweep_id)


def test_cancel_twice_keeps_the_first_request(store: Store) -> None:
    sweep_id = new_sweep(store, 3)
    store.call(runs.set_run_status, cell_ids(store, sweep_id)[0], "running")
    first = store.call(repo.request_cancel, sweep_id, NOW)
    assert first.left == "pending"
    assert first.sweep is not None
    assert (first.sweep.status, first.sweep.cells_cancelled, first.sweep.cells_running) == ("draining", 2, 1)
    again = store.call(repo.request_cancel, sweep_id, NOW + timedelta(seconds=5))
    assert again.left is None
    assert again.sweep is not None
    assert utc(again.sweep.cancel_requested_at) == NOW
    assert store.call(repo.request_cancel, 999).sweep is None


def test_status_moves_are_compare_and_set(store: Store) -> None:
    sweep_id = new_sweep(store, 1)
    assert store.call(repo.move_status, sweep_id, "pending", "running") is True
    assert store.call(repo.move_status, sweep_id, "pending", "running") is False
    assert store.call(repo.move_status, sweep_id, "running", "failed", error="1 of 1 cells failed") is True
    sweep = store.call(repo.get_sweep, sweep_id)
    assert sweep is not None
    assert (sweep.status, sweep.error, sweep.completed_at is not None) == ("failed", "1 of 1 cells failed", True)


def test_one_owner_at_a_time(store: Store) -> None:
    sweep_id = new_sweep(store, 1)
    assert store.call(SWEEP_LEASES.claim, sweep_id, "a", NOW + timedelta(seconds=30), NOW) is True
    assert store.call(SWEEP_LEASES.claim, sweep_id, "b", NOW + timedelta(seconds=30), NOW) is False
    assert store.call(SWEEP_LEASES.orphaned, NOW) == []
    assert store.call(SWEEP_LEASES.orphaned, NOW + timedelta(seconds=31)) == [(sweep_id, "a")]
    assert store.call(SWEEP_LEASES.orphaned, NOW, dead_owner=lambda owner: owner == "a") == [(sweep_id, "a")]
    assert store.call(SWEEP_LEASES.claim, sweep_id, "b", NOW + timedelta(seconds=30), NOW, steal_from="a") is True
    assert store.call(SWEEP_LEASES.renew, "b", NOW + timedelta(seconds=60)) == [sweep_id]
    store.call(SWEEP_LEASES.release, "b")
    assert store.call(SWEEP_LEASES.orphaned, NOW) == [(sweep_id, None)]


# -- concurrency --------------------------------------------------------------------------------------------

Step = tuple[str, int, str]
steps = st.one_of(
    st.tuples(st.just("status"), st.integers(0, 7), st.sampled_from(RUN_STATES)),
    st.tuples(st.just("drain"), st.just(0), st.just("")),
    st.tuples(st.just("cancel"), st.just(0), st.just("")),
    st.tuples(st.just("launch"), st.just(0), st.just("")),
)


# every example makes a sweep of its own in the test's database (shared by the examples, hence the health check)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(cells=st.integers(1, 8), plans=st.lists(st.lists(steps, min_size=1, max_size=12), min_size=2, max_size=5))
def test_counters_add_up_under_concurrent_transitions(database_url: str, cells: int, plans: list[list[Step]]) -> None:
    """Threads change cells (the engine's ``set_run_status``), drain, cancel and launch at once, racing on the
    same cells; a reader checks every committed state; at the end the counters match the cells' statuses."""
    store = Store(database_url)
    sweep_id = new_sweep(store, cells, max_parallel=3)
    ids = cell_ids(store, sweep_id)
    start = threading.Barrier(len(plans) + 1)
    done = threading.Event()
    errors: list[BaseException] = []

    def hammer(plan: list[Step]) -> None:
        start.wait()
        try:
            for kind, index, target in plan:
                if kind == "status":
                    store.call(runs.set_run_status, ids[index % cells], target)
                elif kind == "drain":
                    store.call(repo.drain_pending, sweep_id, "drained")
                elif kind == "cancel":
                    store.call(repo.request_cancel, sweep_id)
                else:
                    store.call(repo.next_cells, sweep_id, set(), **LAUNCHER)
        except Exception as exc:  # noqa: BLE001 - a thread's failure is reported by the test
            errors.append(exc)

    def read() -> None:
        start.wait()
        while not done.is_set():
            sweep = store.call(repo.get_sweep, sweep_id)
            if sweep is None or repo.counters(sweep).total != sweep.cell_count:
                errors.append(AssertionError(f"counters do not add up: {sweep}"))
                return

    threads = [threading.Thread(target=hammer, args=(plan,)) for plan in plans]
    reader = threading.Thread(target=read)
    for thread in [*threads, reader]:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    assert errors == []
    assert_counters_match(store, sweep_id)
    store.close()


def test_cells_launched_as_one_array_move_together_record_their_tasks_and_keep_their_place(store: Store) -> None:
    sweep_id = new_sweep(store, 4)
    order = [cell.id for cell in sorted(store.call(repo.cells, sweep_id), key=lambda c: (c.started_at, c.id))]
    store.call(runs.set_run_status, order[3], "cancelled")
    moved = store.call(repo.move_cells, sweep_id, order, "submitting", only_from=["pending"], owner="me")
    assert moved == [(run_id, "pending") for run_id in order[:3]]  # the cancelled cell stays cancelled
    assert_counters_match(store, sweep_id)
    rows = store.call(lambda s: {j.run_id: j for j in s.exec(select(WorkflowRunJob))})
    assert [rows[run_id].status for run_id in order] == ["SUBMITTING"] * 3 + ["WAITING"]
    places = [store.call(runs.sweep_place, run_id) for run_id in order]
    assert places == [(0, order[0]), (1, order[0]), (2, order[0]), None]  # the task of each, and the array's marker
    tasks = [
        repo.ArrayCell(run_id, rows[run_id].id or 0, i, JobDefinition(name="a", command="true"), f"o{i}", f"e{i}")
        for i, run_id in enumerate(order[:3])
    ]
    statuses = store.call(repo.finish_array, sweep_id, transport="local", array_job_id="77", cells=tasks)
    assert statuses == dict.fromkeys(order[:3], "submitting")
    assert store.call(repo.get_sweep, sweep_id).array_job_id == "77"  # type: ignore[union-attr]
    store.call(repo.move_cells, sweep_id, order, "running", only_from=["submitting"])
    waiting = store.call(repo.waiting_in_queue, sweep_id)
    assert sorted(waiting) == sorted((run_id, f"77_{i}") for i, run_id in enumerate(order[:3]))
    assert_counters_match(store, sweep_id)


def test_an_array_that_could_not_be_submitted_fails_its_cells(store: Store) -> None:
    sweep_id = new_sweep(store, 2)
    ids = cell_ids(store, sweep_id)
    store.call(repo.move_cells, sweep_id, ids, "submitting", only_from=["pending"])
    failed = store.call(repo.fail_cells, sweep_id, ids, "submission of job 'a' failed: no")
    assert sorted(failed) == sorted((run_id, "submitting") for run_id in ids)
    cells = store.call(repo.cells, sweep_id)
    assert {(cell.status, cell.error) for cell in cells} == {("failed", "submission of job 'a' failed: no")}
    rows = store.call(lambda s: list(s.exec(select(WorkflowRunJob))))
    assert {row.status for row in rows} == {"FAILED"}
    assert_counters_match(store, sweep_id)
