"""Benchmark: ``GET /api/jobs`` with 10,000 jobs queued, against a raw squeue reading the same fields.

10,000 real jobs cannot be queued on the shared dev cluster: its MaxJobCount is 10,000 and counts every array
task, so holding them would refuse every other submission meanwhile. Both sides therefore run a fake ``squeue``
(a ``PATH`` shim printing a file) whose output is 10,000 lines generated from recorded real squeue output
(``tests/fixtures/slurm/squeue_queue.txt``, svc's own ``--Format``, the job ids renumbered). Alternating,
``--repeat`` times each:

- raw: the squeue svc runs (``svc_host.slurm.argv.squeue_argv``: same fields, same flags), its output read;
- svc cold: ``GET /api/jobs`` (in-process ASGI, ``local`` transport) with the snapshot forced stale, so every
  request runs that squeue, parses it and encodes the list;
- svc warm: ``GET /api/jobs`` served from the shared snapshot (what every other client within the second gets).

    python bench/jobs_list_10k.py [--jobs 10000] [--repeat 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from svc_host.api.app import create_app
from svc_host.context import Host
from svc_host.paths import SvcPaths
from svc_host.plugins import create_plugin_manager
from svc_host.slurm.argv import squeue_argv
from svc_host.testing.http import asgi_client, security_for_tests

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "slurm"


def quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


async def raw_squeue() -> int:
    proc = await asyncio.create_subprocess_exec(
        *squeue_argv(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    return out.count(b"\n")


def fake_squeue(bin_dir: Path, jobs: int) -> None:
    """A ``squeue`` in ``bin_dir`` printing ``jobs`` lines made from recorded output, ids renumbered."""
    recorded = [line for line in (FIXTURES / "squeue_queue.txt").read_text().splitlines() if line.strip()]
    lines = []
    for number in range(jobs):
        _, rest = recorded[number % len(recorded)].split("|", 1)
        lines.append(f"{100_000 + number}|{rest}")
    output = bin_dir / "squeue.out"
    output.write_text("\n".join(lines) + "\n")
    shim = bin_dir / "squeue"
    shim.write_text(f'#!/bin/sh\nexec cat "{output}"\n')
    shim.chmod(0o755)


async def main(jobs: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = SvcPaths(root / "etc.json", root / "config", root / "state", root)
        bin_dir = root / "bin"
        bin_dir.mkdir()
        fake_squeue(bin_dir, jobs)
        os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"  # both sides run the shim
        host = Host.create("web", paths=paths, plugins=create_plugin_manager(strict=True))
        try:
            async with asgi_client(create_app(host, security=security_for_tests())) as client:
                raw, cold, warm = [], [], []
                lines = listed = 0
                for _ in range(repeat):
                    started = time.perf_counter()
                    lines = await raw_squeue()
                    raw.append(time.perf_counter() - started)
                    host.transports.snapshots.max_age = 0.0  # stale at once: this request runs squeue
                    started = time.perf_counter()
                    response = await client.get("/api/jobs")
                    cold.append(time.perf_counter() - started)
                    response.raise_for_status()
                    host.transports.snapshots.max_age = 1.0
                    started = time.perf_counter()
                    again = await client.get("/api/jobs")
                    warm.append(time.perf_counter() - started)
                    again.raise_for_status()
                    listed = len(response.json())
        finally:
            await host.close()
    print(f"fake squeue (PATH shim printing a file) printed {lines} lines; GET /api/jobs listed {listed} jobs")
    print(f"raw squeue (same fields)      {quantiles(raw)}")
    base = statistics.median(raw)
    print(
        f"GET /api/jobs, fresh squeue   {quantiles(cold)}   p50 {statistics.median(cold) / base:.2f}x raw (goal 1.3x)"
    )
    print(f"GET /api/jobs, from snapshot  {quantiles(warm)}   p50 {statistics.median(warm) / base:.2f}x raw")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()
    asyncio.run(main(options.jobs, options.repeat))
