"""Benchmark: a run's attempts as svc shows them vs the raw sacct a user would run for the same jobs, and the
cost of one planning pass with the retry rules.

Needs the dev cluster's accounting (``scripts/devcluster up``) and jobs in the last day (any tests' jobs). A
throwaway SQLite store gets one run of ``--jobs`` jobs with three attempts each, whose scheduler ids are real
jobs from accounting. Then, side by side (p50 and p95 of ``--repeat`` runs):

- raw ``sacct -j <every attempt's id> -X -P -o JobID,State,ExitCode,NodeList,ReqMem,Timelimit,Elapsed``;
- svc's run detail with ``attempts`` (one read of the store, ``views.run_detail``, JSON encoded), as
  ``GET /api/workflows/runs/{id}`` builds it;
- one planning pass (``RunSnapshot.views`` + ``plan``) over the run, as the engine makes on every change.

    python bench/run_attempts.py [--jobs 100] [--repeat 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.submission import JobDefinition, Resources
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.workflows import job_rows
from svc_host.workflows import store as repo
from svc_host.workflows.model import Dependency
from svc_host.workflows.plan import plan
from svc_host.workflows.retries import Escalate, MemoryRule
from svc_host.workflows.views import run_detail

ENDS = (JobState.OUT_OF_MEMORY, JobState.PREEMPTED)
SACCT_FIELDS = "JobID,State,ExitCode,NodeList,ReqMem,Timelimit,Elapsed"


async def output(*argv: str) -> str:
    process = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    return out.decode()


async def timed(work: Callable[[], Awaitable[object]], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await work()
        samples.append((time.perf_counter() - start) * 1000)
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def build(store: Store, job_ids: list[str], jobs: int) -> str:
    """One run of ``jobs`` chained jobs, each with three attempts (two retried ends, then a completion)."""
    rule = Escalate(memory=MemoryRule(factor=2, max="64G"))
    new_jobs = [
        repo.NewJob(
            f"j{n}",
            [Dependency("afterok", f"j{n - 1}")] if n else [],
            JobDefinition(name=f"j{n}", command="true", resources=Resources(memory_per_node="1G")),
            retry=0,
            retry_delay=60,
            escalate=rule,
        )
        for n in range(jobs)
    ]
    store.call(
        repo.insert_run,
        repo.NewRun("bench", "/bench.yaml", {}, {}, "local", None, [], new_jobs),
        run_id="bench",
        status="running",
        triggered_by="cli",
    )
    ids = iter(job_ids)
    now = datetime.now(UTC)
    for attempt in range(3):
        snap = store.call(repo.snapshot, "bench")
        for row in snap.jobs:
            expected = "WAITING" if attempt == 0 else "RETRYING"
            store.call(job_rows.begin_submit, row.id, expected)
            definition = JobDefinition.model_validate_json(row.definition)
            job_id = next(ids)
            store.call(
                job_rows.finish_submit,
                row.id,
                transport="local",
                job_id=job_id,
                definition=definition,
                stdout_path=None,
                stderr_path=None,
            )
            state = ENDS[attempt] if attempt < 2 else JobState.COMPLETED
            status = JobStatus(job_id=job_id, state=state, raw_state=state.value, exit_code=0, node_list="localhost")
            store.call(job_repo.apply_statuses, "local", {job_id: status})
        snap = store.call(repo.snapshot, "bench")
        store.call(job_rows.apply_updates, "bench", plan(snap.views(), now).updates, now)
    return "bench"


async def main(jobs: int, repeat: int) -> None:
    listed = await output("sacct", "-a", "-X", "-n", "-P", "-o", "JobID", "-S", "now-1day")
    job_ids = list(dict.fromkeys(line for line in listed.split() if line.isdigit()))[: 3 * jobs]
    if len(job_ids) < 3 * jobs:
        raise SystemExit(f"accounting holds {len(job_ids)} plain jobs from the last day; {3 * jobs} needed")
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'svc.db'}")
        run_id = build(store, job_ids, jobs)

        async def raw() -> None:
            await output("sacct", "-j", ",".join(job_ids), "-X", "-n", "-P", "-o", SACCT_FIELDS)

        async def detail() -> None:
            snap = await store.run(repo.snapshot, run_id)
            assert snap is not None
            json.dumps(run_detail(snap, await store.run(repo.attempts, run_id)))

        snap = store.call(repo.snapshot, run_id)
        assert snap is not None

        async def planning() -> None:
            plan(snap.views(), datetime.now(UTC))

        shown = len(store.call(repo.attempts, run_id))
        print(f"one run: {jobs} jobs x 3 attempts = {shown} attempts (ids of real jobs in accounting)")
        for label, work in (
            (f"raw sacct -j <{len(job_ids)} ids> -o {SACCT_FIELDS}", raw),
            ("svc run detail with attempts (store read + JSON)", detail),
            (f"svc planning pass over {jobs} jobs (views + plan)", planning),
        ):
            p50, p95 = await timed(work, repeat)
            print(f"{label:<72} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms")
        store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=30)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.jobs, arguments.repeat))
