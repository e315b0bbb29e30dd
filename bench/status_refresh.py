"""Benchmark: one status refresh of 200 tracked jobs through the ``local`` transport vs one raw squeue.

Needs the dev cluster (``scripts/devcluster up``). Submits 100 short jobs and waits for them to finish,
then 100 long ones that stay live, and times ``LocalTransport.statuses`` over all 200 ids (live jobs come
from squeue, finished ones from sacct) against a raw ``squeue`` of the same ids. Cancels its jobs.

    python bench/status_refresh.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.slurm.argv import squeue_argv
from svc_host.transport import CommandResult
from svc_plugin_local.transport import LocalTransport


class CountingTransport(LocalTransport):
    """Counts the scheduler commands a refresh issues."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[str] = []

    async def run(self, argv: Sequence[str], **kwargs: Any) -> CommandResult:
        self.commands.append(argv[0])
        return await super().run(argv, **kwargs)


async def submit_many(transport: LocalTransport, command: str, count: int, log_dir: str) -> list[str]:
    script = render_sbatch(JobDefinition(name="bench", command=command, log_dir=log_dir))
    return [await transport.submit(script) for _ in range(count)]


async def main(repeat: int) -> None:
    transport = CountingTransport()
    with tempfile.TemporaryDirectory() as log_dir:
        finished = await submit_many(transport, "true", 100, log_dir)
        for _ in range(300):
            if all(s.state.is_terminal for s in (await transport.statuses(finished)).values()):
                break
            await asyncio.sleep(1)
        live = await submit_many(transport, "sleep 600", 100, log_dir)
        ids = finished + live
        try:
            refresh, counts = [], []
            for _ in range(repeat):
                transport.commands.clear()
                start = time.perf_counter()
                found = await transport.statuses(ids)
                refresh.append(time.perf_counter() - start)
                counts.append(len(transport.commands))
            raw = []
            for _ in range(repeat):
                start = time.perf_counter()
                raw_squeue = await asyncio.create_subprocess_exec(
                    *squeue_argv(ids), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
                )
                await raw_squeue.wait()
                raw.append(time.perf_counter() - start)
        finally:
            await transport.cancel(live)
    p50, raw50 = statistics.median(refresh), statistics.median(raw)
    print(f"tracked jobs:                  {len(ids)} (100 finished, 100 live); statuses found: {len(found)}")
    print(f"scheduler commands per refresh: {max(counts)} ({', '.join(sorted(set(transport.commands)))})")
    print(f"refresh wall time p50:          {p50 * 1000:.1f} ms (min {min(refresh) * 1000:.1f} ms)")
    print(f"raw squeue of the same ids p50: {raw50 * 1000:.1f} ms")
    print(f"ratio refresh / raw squeue:     {p50 / raw50:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    asyncio.run(main(parser.parse_args().repeat))
