"""Benchmark: GET /api/jobs with 500 queued jobs vs a raw squeue, and one monitor tick over 1,000 jobs.

Needs the dev cluster (``scripts/devcluster up``). Submits held jobs (pending, holding no resources) as
the REST server would, so they are tracked in a throwaway store, then:

- times ``GET /api/jobs`` (in-process ASGI, the server's ``local`` transport) against a raw ``squeue``
  printing the same queue (p50 and p95);
- counts the scheduler commands of one monitor tick over 1,000 tracked jobs and times it.

Cancels its jobs at the end.    python bench/api_and_monitor.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from svc_host.api.app import create_app
from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.services import jobs
from svc_host.settings.paths import SvcPaths
from svc_host.slurm.argv import program, squeue_argv
from svc_host.testing.http import asgi_client, security_for_tests
from svc_host.transports.base import CommandResult
from svc_plugin_local.transport import LocalTransport


def quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


async def raw_squeue() -> None:
    """The same squeue, its output read as any client of it would."""
    proc = await asyncio.create_subprocess_exec(
        *squeue_argv(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    await proc.communicate()


async def main(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = SvcPaths(root / "etc.json", root / "config", root / "state", root)
        host = Host.create("web", paths=paths, plugins=create_plugin_manager(strict=True))
        commands: list[str] = []
        local = host.transport("local")
        assert isinstance(local, LocalTransport)
        original = local.run

        async def counting(argv: Sequence[str], **kwargs: Any) -> CommandResult:
            commands.append(program(argv))
            return await original(argv, **kwargs)

        local.run = counting  # type: ignore[method-assign]
        held = JobDefinition(
            name="bench", script="#!/bin/bash\n#SBATCH --hold\nsleep 600\n", log_dir=str(root / "logs")
        )
        submitted: list[str] = []
        try:
            for _ in range(500):
                submitted.append((await jobs.submit(host, held, transport="local", source="web")).job_id)
            await host.monitor.stop()
            async with asgi_client(create_app(host, security=security_for_tests())) as client:
                api, squeue = [], []
                for _ in range(repeat):
                    start = time.perf_counter()
                    response = await client.get("/api/jobs")
                    api.append(time.perf_counter() - start)
                    assert response.status_code == 200
                    start = time.perf_counter()
                    await raw_squeue()
                    squeue.append(time.perf_counter() - start)
                queued = len(response.json())
            for _ in range(500):
                submitted.append((await jobs.submit(host, held, transport="local", source="web")).job_id)
            await host.monitor.stop()
            commands.clear()
            start = time.perf_counter()
            await host.monitor.tick("local")
            tick = time.perf_counter() - start
            tick_commands = list(commands)
        finally:
            await local.cancel(submitted)
            await host.close()
    api50, api95 = quantiles(api)
    sq50, sq95 = quantiles(squeue)
    print(f"GET /api/jobs with {queued} queued jobs: p50 {api50 * 1000:.1f} ms, p95 {api95 * 1000:.1f} ms")
    print(f"raw squeue of the same queue:       p50 {sq50 * 1000:.1f} ms, p95 {sq95 * 1000:.1f} ms")
    print(f"ratio p50: {api50 / sq50:.2f}x (goal <= 1.3x)")
    used, count = " + ".join(tick_commands), len(tick_commands)
    print(f"monitor tick over {len(submitted)} tracked jobs: {count} command(s) ({used}), {tick * 1e3:.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=30)
    asyncio.run(main(parser.parse_args().repeat))
