"""Benchmark: one status refresh of 200 tracked jobs through the ``local`` transport vs raw commands.

Needs the dev cluster (``scripts/devcluster up``). Submits 100 short jobs and waits for them to finish,
then 100 held ones that stay pending without taking resources, and times ``LocalTransport.statuses``
over all 200 ids (live jobs come from squeue, finished ones from sacct) and over the 100 live ones alone,
against the raw ``squeue`` and ``sacct`` commands the refresh is made of (sacct also without its
``env SLURM_TIME_FORMAT=%s`` prefix, to show what the prefix costs). Cancels its jobs.

    python bench/status_refresh.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.slurm.argv import program, sacct_argv, squeue_argv
from svc_host.transports.base import CommandResult
from svc_plugin_local.transport import LocalTransport


class CountingTransport(LocalTransport):
    """Counts the scheduler commands a refresh issues."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[str] = []

    async def run(self, argv: Sequence[str], **kwargs: Any) -> CommandResult:
        self.commands.append(program(argv))
        return await super().run(argv, **kwargs)


async def submit_many(transport: LocalTransport, body: str, count: int, log_dir: str) -> list[str]:
    script = render_sbatch(JobDefinition(name="bench", script=f"#!/bin/bash\n{body}\n", log_dir=log_dir))
    return [await transport.submit(script) for _ in range(count)]


async def p50(repeat: int, work: Callable[[], Awaitable[object]]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def raw(argv: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    await proc.wait()


async def main(repeat: int) -> None:
    transport = CountingTransport()
    with tempfile.TemporaryDirectory() as log_dir:
        finished = await submit_many(transport, "true", 100, log_dir)
        for _ in range(300):
            if all(s.state.is_terminal for s in (await transport.statuses(finished)).values()):
                break
            await asyncio.sleep(1)
        live = await submit_many(transport, "#SBATCH --hold\nsleep 600", 100, log_dir)
        ids = finished + live
        try:
            transport.commands.clear()
            found = await transport.statuses(ids)
            mixed_commands = list(transport.commands)
            transport.commands.clear()
            await transport.statuses(live)
            live_commands = list(transport.commands)
            mixed = await p50(repeat, lambda: transport.statuses(ids))
            live_only = await p50(repeat, lambda: transport.statuses(live))
            raw_squeue = await p50(repeat, lambda: raw(squeue_argv(ids)))
            raw_sacct = await p50(repeat, lambda: raw(sacct_argv(finished)))
            plain_sacct = await p50(repeat, lambda: raw(sacct_argv(finished)[2:]))  # without the env prefix
        finally:
            await transport.cancel(live)
    print(f"tracked jobs: {len(ids)} (100 finished, 100 live); statuses found: {len(found)}")
    print(f"commands per refresh, mixed: {len(mixed_commands)} ({' + '.join(mixed_commands)})")
    print(f"commands per refresh, live only: {len(live_commands)} ({' + '.join(live_commands)})")
    print(f"refresh p50, 200 mixed:     {mixed * 1000:7.1f} ms")
    print(f"refresh p50, 100 live:      {live_only * 1000:7.1f} ms")
    print(f"raw squeue p50 (200 ids):   {raw_squeue * 1000:7.1f} ms")
    print(f"raw sacct p50 (100 ids):    {raw_sacct * 1000:7.1f} ms")
    print(f"  same without env SLURM_TIME_FORMAT=%s: {plain_sacct * 1000:7.1f} ms")
    print(f"ratio live refresh / raw squeue:          {live_only / raw_squeue:.2f}x")
    print(f"ratio mixed refresh / (raw squeue + sacct): {mixed / (raw_squeue + raw_sacct):.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=20)
    asyncio.run(main(parser.parse_args().repeat))
