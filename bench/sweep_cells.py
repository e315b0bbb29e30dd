"""Benchmark: a 200-cell sweep of a one-job workflow with max_parallel 50, through the orchestrator and the one
workflow engine, on the dev cluster (``local`` transport).

Measures the time to prepare and write the sweep (every cell validated, rendered and written in one
transaction), the wall time until every cell has ended, the sbatch calls and their rate (calls per second from
the first sbatch to the last), the most cells in flight at once, and every scheduler command the sweep cost.
The cluster has 8 CPUs, so at most 8 one-CPU jobs run at once: the rest wait in Slurm's queue, which is what
max_parallel 50 asks for. Cleans up after itself (state in a temp dir, live jobs cancelled).

    python bench/sweep_cells.py [--cells 200] [--max-parallel 50] [--command true]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from svc_host import hookimpl
from svc_host.context import Host
from svc_host.domain.profiles import HostConfig
from svc_host.paths import SvcPaths
from svc_host.plugin_types import TransportSpec
from svc_host.plugins import create_plugin_manager
from svc_host.slurm.argv import program
from svc_host.store import jobs as job_repo
from svc_host.sweeps.cells import SweepRequest
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.transport import CommandResult
from svc_host.workflows.engine import RunChange, WorkflowEngine
from svc_host.workflows.prepare import RunRequest
from svc_plugin_local.transport import LocalTransport

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


async def main(cells: int, max_parallel: int, command: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.chdir(base)
        paths = SvcPaths(
            system_config=base / "etc.json", user_config_dir=base / "config", state_dir=base / "state", project_dir=base
        )
        plugins = create_plugin_manager(strict=True, entry_points_too=False)
        plugins.register(CountingPlugin(), "counting-local")
        host = Host.create("web", paths=paths, plugins=plugins, read_env=False)
        engine = WorkflowEngine(host, adopt_orphans=False)
        await engine.start()
        orchestrator = SweepOrchestrator(engine, adopt_orphans=False)
        await orchestrator.start()
        flying: list[int] = []

        async def watch(change: RunChange) -> None:
            if change.sweep_id is not None:
                flying.append((await orchestrator.get(change.sweep_id)).cells_running)

        engine.add_listener(watch)
        path = base / "one.yaml"
        path.write_text(f"name: one\nargs: {{i: 0}}\njobs:\n  - {{name: cell, command: {command!r}}}\n")
        spec = parse_sweep({"matrix": {"i": list(range(cells))}, "max_parallel": max_parallel})
        started = time.perf_counter()
        sweep = await orchestrator.submit(SweepRequest(run=RunRequest(yaml_path=path), spec=spec, source="web"))
        written = time.perf_counter() - started
        assert sweep.id is not None
        try:
            done = await orchestrator.wait(sweep.id, timeout=1800)
        finally:
            finished = time.perf_counter() - started
            if done.status not in ("completed", "failed", "cancelled"):
                await orchestrator.cancel(sweep.id)
            live = [record.job_id for record in host.store.call(job_repo.live_jobs)]
            await orchestrator.close()
            await engine.close()
            if live:
                await host.transport("local").cancel(live)
            await host.close()
    sbatch = sorted((start, end) for name, start, end in COMMANDS if name == "sbatch")
    span = sbatch[-1][1] - sbatch[0][0]
    wave = sorted(end for _, end in sbatch[:max_parallel])[-1] - sbatch[0][0]
    print(f"cells: {cells} (one job each: {command!r}), max_parallel {max_parallel}, 8 CPUs on the dev cluster")
    print(f"prepare + write of the sweep and every cell: {written:.2f} s")
    print(
        f"sweep {done.status} after {finished:.1f} s: {done.cells_completed} completed, {done.cells_failed} failed, "
        f"{done.cells_cancelled} cancelled"
    )
    print(f"sbatch calls: {len(sbatch)} in {span:.1f} s = {len(sbatch) / span:.1f} per second over the sweep")
    first = min(max_parallel, len(sbatch))
    print(f"first wave: {first} cells submitted in {wave:.2f} s = {first / wave:.1f} sbatch per second")
    print(f"cells in flight at most: {max(flying)} (max_parallel {max_parallel})")
    print(f"scheduler commands: {dict(collections.Counter(name for name, _, _ in COMMANDS))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cells", type=int, default=200)
    parser.add_argument("--max-parallel", type=int, default=50)
    parser.add_argument("--command", default="true")
    options = parser.parse_args()
    asyncio.run(main(options.cells, options.max_parallel, options.command))
