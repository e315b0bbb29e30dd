"""Several svc processes on one store at once, on SQLite and on PostgreSQL: nothing lost, no "database is locked".

``svc serve``, ``svc mcp`` and CLI commands each open the store and write to it while the others do. Here real
processes, started together on a fresh database (so they also migrate it at the same moment), each write jobs
with their transitions and workflow runs through to ``completed`` (the same repository functions the monitor
and the engine use) while a reader lists history the way the API does.
"""

from __future__ import annotations

import subprocess
import sys
import time

from sqlalchemy import text

from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.store.migrations import MIGRATIONS
from svc_host.workflows import store as runs

WRITERS = 6
ROUNDS = 50
WRITER = """
import sys
from svc_host.domain.jobs import JobState, JobStatus
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.workflows import run_status
from svc_host.workflows import store as runs

url, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = Store(url)
for n in range(rounds):
    job_id = str(n)
    store.call(job_repo.add_job, transport=name, job_id=job_id, name="j", source="cli", resources={}, command=["true"])
    done = JobStatus(job_id=job_id, state=JobState.COMPLETED, raw_state="COMPLETED", exit_code=0)
    store.call(job_repo.apply_statuses, name, {job_id: done})
    run_id = f"{name}-{n}"
    new = runs.NewRun("wf", "/wf.yaml", {}, {}, name, None, [], [])
    store.call(runs.insert_run, new, run_id=run_id, status="submitting", triggered_by="cli")
    assert store.call(run_status.set_run_status, run_id, "running") == "submitting"
    assert store.call(run_status.set_run_status, run_id, "completed") == "running"
"""
READER = """
import sys
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.workflows import store as runs

store = Store(sys.argv[1])
for _ in range(int(sys.argv[2])):
    store.call(job_repo.history, limit=200)
    store.call(runs.snapshots, limit=50)
"""


def test_writers_in_separate_processes_lose_nothing(database_url: str) -> None:
    url = database_url
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, f"w{index}", str(ROUNDS)], stderr=subprocess.PIPE, text=True
        )
        for index in range(WRITERS)
    ]
    processes.append(
        subprocess.Popen([sys.executable, "-c", READER, url, str(ROUNDS)], stderr=subprocess.PIPE, text=True)
    )
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert "database is locked" not in err
    elapsed = time.perf_counter() - started
    store = Store(url)
    jobs = store.call(job_repo.history, limit=10 * WRITERS * ROUNDS)
    assert len(jobs) == WRITERS * ROUNDS
    assert {job.state for job in jobs} == {"COMPLETED"}
    snaps = store.call(runs.snapshots, limit=10 * WRITERS * ROUNDS)
    assert len(snaps) == WRITERS * ROUNDS
    assert {snap.run.status for snap in snaps} == {"completed"}
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT version FROM schema_version")).scalars().all() == [len(MIGRATIONS)]
        transitions = conn.execute(text("SELECT count(*) FROM job_transition")).scalar()
    assert transitions == 2 * WRITERS * ROUNDS  # PENDING when recorded, then COMPLETED
    store.close()
    writes = WRITERS * ROUNDS * 5
    print(f"{WRITERS} writers + 1 reader: {writes} write transactions in {elapsed:.1f} s")
