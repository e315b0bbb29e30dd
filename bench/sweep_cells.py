"""Benchmark: a sweep of a one-job workflow through the orchestrator and the one workflow engine (``local``
transport), by default 200 identical cells with max_parallel 50 on the dev cluster.

Measures the time to prepare and write the sweep (every cell validated, rendered and written in one
transaction), the wall time until every cell has ended, the sbatch calls and their rate (calls per second from
the first sbatch to the last), the most cells in flight at once, and every scheduler command the sweep cost.
The cluster has 8 CPUs, so at most 8 one-CPU jobs run at once: the rest wait in Slurm's queue, which is what
max_parallel 50 asks for. Cleans up after itself (state in a temp dir, live jobs cancelled).

``--non-uniform`` sweeps two axes of unequal length (``lr`` x ``size``, 8 sizes) that change each cell's command
and work directory, so every cell renders a different script. ``--fake-slurm`` puts ``sbatch``, ``squeue`` and
``sacct`` shims first on ``PATH`` (sbatch hands out ids, squeue lists nothing, sacct reports every asked id
COMPLETED): the engine's own rate, without the dev cluster's 8 CPUs (or the other users of the cluster) in the way.

    python bench/sweep_cells.py [--cells 200] [--max-parallel 50] [--command true]
    python bench/sweep_cells.py --cells 1000 --max-parallel 100 --non-uniform --fake-slurm
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.plugin_core.records import TransportSpec
from svc_host.settings.paths import SvcPaths
from svc_host.slurm.argv import program
from svc_host.store import jobs as job_repo
from svc_host.store.tables import SweepRunRecord
from svc_host.sweeps.cell_counts import IN_FLIGHT
from svc_host.sweeps.cells import SweepRequest
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.transports.base import CommandResult
from svc_host.workflows.engine import RunChange, WorkflowEngine
from svc_host.workflows.prepare import RunRequest
from svc_plugin_local.transport import LocalTransport

SIZES = ("xs", "s", "m", "l", "xl", "2xl", "3xl", "4xl")
SBATCH_SHIM = """#!/bin/sh
# ids from a counter under a lock: concurrent submissions never share one
exec 9>>"{dir}/lock"
flock 9
n=$(( $(cat "{dir}/counter" 2>/dev/null || echo 100000) + 1 ))
echo "$n" > "{dir}/counter"
flock -u 9
cat > /dev/null
echo "$n"
"""
SACCT_SHIM = """#!/bin/sh
# the states svc asks for, or (--format=JobID,State,NCPUS,...) the usage: the allocation and its batch step
usage=no
for arg; do case "$arg" in --jobs=*) ids="${{arg#--jobs=}}";; --format=JobID,State,NCPUS,*) usage=yes;; esac; done
now=$(date +%s)
echo "$ids" | tr , '\\n' | while read -r id; do
  if [ "$usage" = yes ]; then
    echo "$id|COMPLETED|1|billing=1,cpu=1,mem=1G,node=1|1G|UNLIMITED|0|00:00.010||"
    echo "$id.batch|COMPLETED|1|cpu=1,mem=1G,node=1|||0|00:00.010|1100K|cpu=00:00:00,mem=1100K"
  else
    echo "$id|COMPLETED|0:0|debug|1|1|365-00:00:00|cpu=1,node=1|cpu=1,node=1|root|localhost|None|$now|$now|$now|cell"
  fi
done
"""

COMMANDS: list[tuple[str, float, float]] = []
"""(command, start, end) of every command the transport ran."""


class CountingTransport(LocalTransport):
    """The local transport, recording every command it runs and when."""

    async def run(self, argv: Sequence[str], **kwargs: Any) -> CommandResult:
        start = time.perf_counter()
        try:
            return await super().run(argv, **kwargs)
        finally:
            COMMANDS.append((program(argv), start, time.perf_counter()))


class CountingPlugin:
    @hookimpl
    def svc_transports(self, config: HostConfig) -> list[TransportSpec]:
        return [TransportSpec(name="local", factory=CountingTransport, description="counting local transport")]


def fake_slurm(bin_dir: Path) -> None:
    """``sbatch``/``squeue``/``sacct`` shims in ``bin_dir``, put first on ``PATH``."""
    bin_dir.mkdir()
    for name, text in (("sbatch", SBATCH_SHIM), ("sacct", SACCT_SHIM), ("squeue", "#!/bin/sh\nexit 0\n")):
        (bin_dir / name).write_text(text.format(dir=bin_dir))
        (bin_dir / name).chmod(0o755)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def workflow(cells: int, command: str, *, non_uniform: bool) -> tuple[str, dict[str, Any]]:
    """The workflow's YAML and the sweep's matrix."""
    if not non_uniform:
        yaml = f"name: one\nargs: {{i: 0}}\njobs:\n  - {{name: cell, command: {command!r}}}\n"
        return yaml, {"i": list(range(cells))}
    if cells % len(SIZES):
        raise SystemExit(f"--non-uniform needs a multiple of {len(SIZES)} cells")
    yaml = (
        "name: one\nargs: {lr: 0.1, size: m}\njobs:\n"
        f"  - {{name: cell, command: '{command} --lr={{{{ lr }}}} --size={{{{ size }}}}', "
        "work_dir: 'runs/{{ size }}/{{ lr }}'}\n"
    )
    return yaml, {"lr": [round(0.0001 * (k + 1), 4) for k in range(cells // len(SIZES))], "size": list(SIZES)}


@dataclass
class Timed:
    """A sweep run to its end: its last record, and when it started, was written and ended (``perf_counter``;
    ``written`` and ``finished`` in seconds from ``started``)."""

    done: SweepRunRecord
    started: float
    written: float
    finished: float


@asynccontextmanager
async def counting_sweeps(
    base: Path, *, arrays: bool = True
) -> AsyncIterator[tuple[WorkflowEngine, SweepOrchestrator]]:
    """A fresh svc state under ``base`` whose local transport counts its commands (``COMMANDS``): its engine and
    sweep orchestrator; afterwards both are closed and the jobs still live are cancelled."""
    paths = SvcPaths(
        system_config=base / "etc.json", user_config_dir=base / "config", state_dir=base / "state", project_dir=base
    )
    plugins = create_plugin_manager(strict=True, entry_points_too=False)
    plugins.register(CountingPlugin(), "counting-local")
    host = Host.create("web", paths=paths, plugins=plugins, read_env=False)
    engine = WorkflowEngine(host, adopt_orphans=False)
    await engine.start()
    orchestrator = SweepOrchestrator(engine, adopt_orphans=False, arrays=arrays)
    await orchestrator.start()
    try:
        yield engine, orchestrator
    finally:
        live = [record.job_id for record in host.store.call(job_repo.live_jobs)]
        await orchestrator.close()
        await engine.close()
        if live:
            await host.transport("local").cancel(live)
        await host.close()


async def run_sweep(orchestrator: SweepOrchestrator, path: Path, matrix: dict[str, Any], max_parallel: int) -> Timed:
    """Submit the sweep of ``path`` over ``matrix`` and wait for its end (cancelled if the wait fails)."""
    spec = parse_sweep({"matrix": matrix, "max_parallel": max_parallel})
    started = time.perf_counter()
    sweep = await orchestrator.submit(SweepRequest(run=RunRequest(yaml_path=path), spec=spec, source="web"))
    written = time.perf_counter() - started
    assert sweep.id is not None
    try:
        done = await orchestrator.wait(sweep.id, timeout=1800)
    except BaseException:
        await orchestrator.cancel(sweep.id)
        raise
    return Timed(done, started, written, time.perf_counter() - started)


def raw_argv(cell: int, command: str, *, non_uniform: bool, fake: bool) -> list[str]:
    """The sbatch a user's loop would run for ``cell``: the same command and work directory as the sweep's
    cell (held on the dev cluster, and cancelled afterwards, so the loop takes no CPU from the sweep)."""
    argv = ["sbatch", "--parsable", "--job-name=cell", "--output=/dev/null"]
    if not fake:
        argv.append("--hold")
    if non_uniform:
        lr, size = round(0.0001 * (cell // len(SIZES) + 1), 4), SIZES[cell % len(SIZES)]
        workdir = Path("raw", size, str(lr))
        workdir.mkdir(parents=True, exist_ok=True)
        return [*argv, f"--chdir={workdir}", f"--wrap={command} --lr={lr} --size={size}"]
    return [*argv, f"--wrap={command}"]


async def raw_loop(cells: int, command: str, *, non_uniform: bool, fake: bool) -> float:
    """sbatch per second of a plain loop submitting the sweep's cells one after another."""
    submitted: list[str] = []
    started = time.perf_counter()
    for cell in range(cells):
        proc = await asyncio.create_subprocess_exec(
            *raw_argv(cell, command, non_uniform=non_uniform, fake=fake),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        if proc.returncode:
            raise SystemExit(f"raw sbatch failed: {err.decode().strip()}")
        submitted.append(out.decode().strip().split(";")[0])
    took = time.perf_counter() - started
    if not fake:
        for start in range(0, len(submitted), 500):
            await (await asyncio.create_subprocess_exec("scancel", *submitted[start : start + 500])).wait()
    return cells / took


async def main(cells: int, max_parallel: int, command: str, *, non_uniform: bool, fake: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.chdir(base)
        if fake:
            fake_slurm(base / "bin")
        raw_rate = await raw_loop(cells, command, non_uniform=non_uniform, fake=fake)
        async with counting_sweeps(base, arrays=False) as (engine, orchestrator):
            flying = [0]  # cells in flight after each change, counted from the changes (no store read)

            async def watch(change: RunChange) -> None:
                if change.sweep_id is not None:
                    shift = (change.to_status in IN_FLIGHT) - (change.from_status in IN_FLIGHT)
                    flying.append(flying[-1] + shift)

            engine.add_listener(watch)
            path = base / "one.yaml"
            yaml, matrix = workflow(cells, command, non_uniform=non_uniform)
            path.write_text(yaml)
            timed = await run_sweep(orchestrator, path, matrix, max_parallel)
    done = timed.done
    report(cells, max_parallel, command, non_uniform=non_uniform, fake=fake, written=timed.written)
    print(f"raw loop of sbatch, same cells one after another: {raw_rate:.1f} sbatch per second")
    print(
        f"sweep {done.status} after {timed.finished:.1f} s: {done.cells_completed} completed, "
        f"{done.cells_failed} failed, {done.cells_cancelled} cancelled; cells in flight at most: {max(flying)} "
        f"(max_parallel {max_parallel})"
    )


def report(cells: int, max_parallel: int, command: str, *, non_uniform: bool, fake: bool, written: float) -> None:
    sbatch = sorted((start, end) for name, start, end in COMMANDS if name == "sbatch")
    span = sbatch[-1][1] - sbatch[0][0]
    wave = sorted(end for _, end in sbatch[:max_parallel])[-1] - sbatch[0][0]
    where = "fake sbatch/squeue/sacct (PATH shims)" if fake else "8 CPUs on the dev cluster"
    shape = f"lr x size, {len(SIZES)} sizes: every cell its own script" if non_uniform else "identical"
    print(f"cells: {cells} ({shape}; one job each: {command!r}), max_parallel {max_parallel}, {where}")
    print(f"prepare + write of the sweep and every cell: {written:.2f} s")
    print(f"sbatch calls: {len(sbatch)} in {span:.1f} s = {len(sbatch) / span:.1f} per second over the sweep")
    first = min(max_parallel, len(sbatch))
    print(f"first wave: {first} cells submitted in {wave:.2f} s = {first / wave:.1f} sbatch per second")
    print(f"scheduler commands: {dict(collections.Counter(name for name, _, _ in COMMANDS))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cells", type=int, default=200)
    parser.add_argument("--max-parallel", type=int, default=50)
    parser.add_argument("--command", default="true")
    parser.add_argument("--non-uniform", action="store_true", help="two unequal axes that change every cell")
    parser.add_argument("--fake-slurm", action="store_true", help="PATH shims for sbatch, squeue and sacct")
    options = parser.parse_args()
    asyncio.run(
        main(
            options.cells,
            options.max_parallel,
            options.command,
            non_uniform=options.non_uniform,
            fake=options.fake_slurm,
        )
    )
