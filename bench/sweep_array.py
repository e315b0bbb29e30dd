"""Benchmark: a 1,000-cell uniform sweep (one job per cell running ``true``, max_parallel 50) on the dev cluster,
three ways in one run: a raw ``sbatch --array`` of the same size, svc's job array path (one sbatch for the
sweep), and svc's per-cell path (one sbatch per cell, ``SweepOrchestrator(arrays=False)``).

For each: the sbatch calls, the time from the request until every cell (task) was accepted by Slurm ("all
submitted"), the time until every cell ended, and (svc) every scheduler command the sweep cost. The raw array's
end is seen by polling squeue every 0.5 s. Each svc run has its own temporary state; live jobs are cancelled.
The dev cluster's MaxArraySize is 1001 (``scontrol show config``), so 1,000 tasks fit in one array.

    python bench/sweep_array.py [--cells 1000] [--max-parallel 50]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sweep_cells import COMMANDS, counting_sweeps, run_sweep


@dataclass
class Outcome:
    label: str
    sbatch: int
    written: float | None
    all_submitted: float
    finished: float
    detail: str


def raw_array(cells: int, max_parallel: int) -> Outcome:
    """``sbatch --array`` by hand, then squeue until the array is gone."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        argv = ["sbatch", "--parsable", f"--array=0-{cells - 1}%{max_parallel}", "-o", "/dev/null", "--wrap", "true"]
        array_id = subprocess.run(argv, check=True, capture_output=True, text=True, cwd=tmp).stdout.strip()
        submitted = time.perf_counter() - started
        polls = 0
        while True:
            polls += 1
            left = subprocess.run(
                ["squeue", "--noheader", f"--jobs={array_id}", "--format=%i"],
                check=False,
                capture_output=True,
                text=True,
            )
            if left.returncode != 0 or not left.stdout.strip():
                break
            time.sleep(0.5)
        finished = time.perf_counter() - started
        return Outcome("raw sbatch --array", 1, None, submitted, finished, f"{polls} squeue polls")


async def svc_sweep(cells: int, max_parallel: int, *, arrays: bool) -> Outcome:
    COMMANDS.clear()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.chdir(base)
        async with counting_sweeps(base, arrays=arrays) as (_, orchestrator):
            path = base / "one.yaml"
            path.write_text("name: one\nargs: {i: 0}\njobs:\n  - {name: cell, command: 'true {{ i }}'}\n")
            timed = await run_sweep(orchestrator, path, {"i": list(range(cells))}, max_parallel)
    done, started, written, finished = timed.done, timed.started, timed.written, timed.finished
    sbatch = [end for name, _, end in COMMANDS if name == "sbatch"]
    counted = dict(collections.Counter(name for name, _, _ in COMMANDS))
    label = "svc, one job array" if arrays else "svc, one sbatch per cell"
    outcome = f"{done.status}: {done.cells_completed} completed, {done.cells_failed} failed; commands {counted}"
    return Outcome(label, len(sbatch), written, max(sbatch) - started, finished, outcome)


async def main(cells: int, max_parallel: int) -> None:
    outcomes = [
        await asyncio.to_thread(raw_array, cells, max_parallel),
        await svc_sweep(cells, max_parallel, arrays=True),
        await svc_sweep(cells, max_parallel, arrays=False),
    ]
    print(f"{cells} cells running 'true', max_parallel {max_parallel}, dev cluster (8 CPUs, shared)")
    print(f"{'':28} {'sbatch':>7} {'written':>9} {'all submitted':>14} {'all ended':>10}")
    for outcome in outcomes:
        written = f"{outcome.written:7.2f} s" if outcome.written is not None else f"{'-':>9}"
        print(
            f"{outcome.label:28} {outcome.sbatch:>7} {written} {outcome.all_submitted:>12.2f} s "
            f"{outcome.finished:>8.1f} s"
        )
    print("written: every cell prepared and written (svc); all submitted and all ended: from the request")
    print(f"load average when done: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for outcome in outcomes:
        print(f"{outcome.label}: {outcome.detail}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--max-parallel", type=int, default=50)
    options = parser.parse_args()
    asyncio.run(main(options.cells, options.max_parallel))
