"""Benchmark: pausing and resuming a sweep on the dev cluster, svc beside the raw ``scontrol`` it stands for.

Two sweeps (``local`` transport, each its own temporary state, jobs cancelled afterwards):

* an array sweep of ``--tasks`` cells (default 200, ``sleep 300``, max_parallel 2): svc's pause holds every
  pending task with one ``scontrol uhold <array>``;
* a per-cell sweep of ``--cells`` two-job cells (default 20, all launched: max_parallel = cells), each with its
  second job queued behind the first: svc's pause holds those jobs with one ``scontrol uhold <id> <id>...``.

For each: the time of svc's pause and resume (store writes, the hold, a monitor refresh and the recount), the
scheduler commands they ran, and the raw ``scontrol uhold``/``release`` of the same ids timed right after.

    python bench/sweep_pause.py [--tasks 200] [--cells 20]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import subprocess
import tempfile
import time
from pathlib import Path

from sweep_cells import COMMANDS, counting_sweeps

from svc_host.sweeps import steering
from svc_host.sweeps import store as repo
from svc_host.sweeps.cells import SweepRequest
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.workflows.prepare import RunRequest

ARRAY = "name: nap\nargs: {i: 0}\njobs:\n  - {name: nap, command: 'sleep 300 # {{ i }}'}\n"
CHAIN = (
    "name: chain\nargs: {i: 0}\njobs:\n  - {name: first, command: 'sleep 300'}\n"
    "  - {name: then, command: 'echo {{ i }}', depends_on: [first]}\n"
)


async def ready(orchestrator: SweepOrchestrator, sweep_id: int, queued: int) -> list[str]:
    """Wait until every cell is launched and at least ``queued`` of the sweep's jobs are queued (stored
    ``PENDING``), so no submission runs beside the pause; returns their ids."""
    for _ in range(600):
        found = await orchestrator.host.store.run(steering.queued_jobs, sweep_id)
        launching = await orchestrator.host.store.run(repo.cell_ids, sweep_id, ["pending", "syncing", "submitting"])
        if len(found) >= queued and not launching:
            await orchestrator.launched(sweep_id)
            return found
        await orchestrator.host.monitor.refresh("local")
        await asyncio.sleep(0.2)
    raise SystemExit(f"sweep {sweep_id}: {len(found)} of {queued} jobs queued, {len(launching)} launching after 120 s")


def raw(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=False, capture_output=True, timeout=60)
    return time.perf_counter() - started


async def measure(label: str, yaml: str, cells: int, max_parallel: int, queued: int, arrays: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.chdir(base)
        path = base / "sweep.yaml"
        path.write_text(yaml)
        async with counting_sweeps(base, arrays=arrays) as (_, orchestrator):
            spec = parse_sweep({"matrix": {"i": list(range(cells))}, "max_parallel": max_parallel})
            sweep = await orchestrator.submit(SweepRequest(run=RunRequest(yaml_path=path), spec=spec, source="web"))
            assert sweep.id is not None
            jobs = await ready(orchestrator, sweep.id, queued)
            COMMANDS.clear()
            started = time.perf_counter()
            paused = await orchestrator.pause(sweep.id)
            pause = time.perf_counter() - started
            pause_commands = collections.Counter(name for name, _, _ in COMMANDS)
            COMMANDS.clear()
            started = time.perf_counter()
            await orchestrator.resume(sweep.id)
            resume = time.perf_counter() - started
            resume_commands = collections.Counter(name for name, _, _ in COMMANDS)
            ids = [paused.array_job_id] if paused.array_job_id else jobs
            raw_hold = raw(["scontrol", "uhold", *ids])
            raw_release = raw(["scontrol", "release", *ids])
            await orchestrator.cancel(sweep.id)
    print(f"{label}: {len(jobs)} queued jobs, {paused.cells_held} cells held")
    print(f"  svc pause  {pause * 1000:7.1f} ms  commands {dict(pause_commands)}")
    print(f"  svc resume {resume * 1000:7.1f} ms  commands {dict(resume_commands)}")
    print(f"  raw scontrol uhold {raw_hold * 1000:7.1f} ms, release {raw_release * 1000:7.1f} ms ({len(ids)} ids)")


async def main(tasks: int, cells: int) -> None:
    await measure(f"array sweep of {tasks} tasks", ARRAY, tasks, 2, tasks - 2, arrays=True)
    await measure(f"per-cell sweep of {cells} two-job cells", CHAIN, cells, cells, cells, arrays=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--cells", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.tasks, options.cells))
