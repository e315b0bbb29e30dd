"""A completion racing a cancel on one run, through two connections to one SQLite file (two svc processes).

Each round starts both changes together (a barrier) from ``running``: exactly one may win, the run ends in the
winner's status, the loser is told nothing changed, and a sweep's counters count the cell once.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from svc_host.store.database import Store
from svc_host.sweeps import store as sweeps
from svc_host.workflows import run_status
from svc_host.workflows import store as repo
from svc_host.workflows.plan import RUN_CANCELLED, RUN_COMPLETED, RUN_RUNNING, RUN_SUBMITTING

ROUNDS = 300


def cell() -> repo.NewRun:
    return repo.NewRun("wf", "/wf.yaml", {}, {}, "local", None, [], [])


def test_completion_and_cancel_never_both_win(database_url: str) -> None:
    url = database_url
    completer, canceller = Store(url), Store(url)
    new = sweeps.NewSweep("wf", "/wf.yaml", {"x": list(range(ROUNDS))}, {}, False, ROUNDS, "web", "local")
    sweep = completer.call(sweeps.insert_sweep, new, [cell() for _ in range(ROUNDS)])
    assert sweep.id is not None
    run_ids = completer.call(sweeps.cell_ids, sweep.id, ["pending"])
    for run_id in run_ids:
        completer.call(run_status.set_run_status, run_id, RUN_RUNNING)
    barrier = threading.Barrier(2)

    def change(store: Store, run_id: str, status: str, only_from: list[str] | None) -> str | None:
        barrier.wait()
        return store.call(run_status.set_run_status, run_id, status, only_from=only_from)

    winners: Counter[str] = Counter()
    with ThreadPoolExecutor(2) as pool:
        for run_id in run_ids:
            done = pool.submit(change, completer, run_id, RUN_COMPLETED, [RUN_RUNNING, RUN_SUBMITTING])
            cancelled = pool.submit(change, canceller, run_id, RUN_CANCELLED, None)
            outcomes = {RUN_COMPLETED: done.result(), RUN_CANCELLED: cancelled.result()}
            won = [status for status, before in outcomes.items() if before is not None]
            assert len(won) == 1, (run_id, outcomes)  # one change, so one status_changed event
            assert outcomes[won[0]] == RUN_RUNNING
            snap = completer.call(repo.snapshot, run_id)
            assert snap is not None
            assert snap.run.status == won[0]
            assert snap.run.completed_at is not None
            winners[won[0]] += 1
    final = completer.call(sweeps.get_sweep, sweep.id)
    assert final is not None
    assert (final.cells_running, final.cells_completed, final.cells_cancelled) == (
        0,
        winners[RUN_COMPLETED],
        winners[RUN_CANCELLED],
    )
    completer.close()
    canceller.close()
