"""Benchmark: reading ended jobs' usage (what efficiency is computed from), raw sacct vs svc, local and over SSH.

Needs the dev cluster (``scripts/devcluster up``). Takes the ``--jobs`` most recent ended jobs accounting knows,
then times, ``--repeat`` times each and side by side:

* the raw command svc runs (``sacct_usage_argv``: the allocations and their steps) as a local subprocess, and
  ``LocalTransport.usage`` (the same command, parsed into ``JobUsage``);
* the same raw command over one kept-alive SSH connection (``transport.run``) and the SSH transport's ``usage``.

The monitor runs this once per tick that sees jobs end, for all of them together; no view runs it.

    python bench/job_usage.py [--jobs 50] [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from typing import Any

from devcluster import dev_profile

from svc_host.slurm.argv import sacct_usage_argv
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport


def recent_ended(count: int) -> list[str]:
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-a", "-o", "JobID,State", "-S", "now-1days"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    ended = [line.split("|")[0] for line in out.splitlines() if line.split("|")[-1].startswith("COMPLETED")]
    return [job_id for job_id in ended if "[" not in job_id][-count:]


async def p50(repeat: int, call: Callable[[], Awaitable[Any]]) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


async def main(count: int, repeat: int) -> None:
    ids = recent_ended(count)
    argv = sacct_usage_argv(ids)
    local = LocalTransport()
    ssh = SSHTransport("dev", dev_profile())
    await ssh.connect()
    try:

        async def raw_local() -> None:
            process = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
            await process.communicate()

        found = await local.usage(ids)
        peaks = sum(usage.max_rss_bytes is not None for usage in found.values())
        print(f"{len(ids)} ended jobs, {len(found)} with usage, {peaks} with a memory peak")
        raw = await p50(repeat, raw_local)
        ours = await p50(repeat, lambda: local.usage(ids))
        print(f"local  raw sacct p50 {raw:6.1f} ms   LocalTransport.usage p50 {ours:6.1f} ms  ({ours / raw:.2f}x)")
        raw = await p50(repeat, lambda: ssh.run(argv))
        ours = await p50(repeat, lambda: ssh.usage(ids))
        print(f"ssh    raw sacct p50 {raw:6.1f} ms   SSHTransport.usage   p50 {ours:6.1f} ms  ({ours / raw:.2f}x)")
    finally:
        await ssh.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.jobs, options.repeat))
