"""Benchmark: ``svc mcp`` from spawn to an answered ``initialize``, and per-tool latency vs the raw Slurm command.

Needs the local Slurm of the dev cluster (``scripts/devcluster up``). Uses the official MCP client
(``mcp.Client`` over stdio) against ``python -m svc_host mcp`` in a temporary svc home:

* spawn -> ``initialize`` answered, one new server process per sample (cold), next to the idle
  interpreter (``python3 -c pass``);
* in one warm server: ``get_resources`` (local) vs the two commands it wraps, raw ``sinfo`` and ``squeue``
  with svc's columns, run at the same time as svc runs them (and ``sinfo`` alone, the floor), ``list_jobs`` vs
  raw ``squeue --user``, and ``get_job_status`` of a live job the server submitted (tracked: the store,
  after the monitor's refresh) vs raw ``squeue --jobs``. The raw commands are spawned from this process the way
  the local transport spawns them. The first call of each tool is shown apart (it may open the store).

Goals: initialize < 0.8 s; every tool <= 1.3x its raw command.

    python bench/mcp_startup.py [--repeat 5] [--calls 20]
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from svc_host.slurm.argv import sinfo_argv, squeue_argv


def server_params(home: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    env.update(XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state", SVC_SYSTEM_CONFIG=f"{home}/etc.json")
    return StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=env, cwd=home)


async def spawn_to_initialize(params: StdioServerParameters) -> float:
    start = time.perf_counter()
    async with Client(params):
        return time.perf_counter() - start


async def idle_interpreter() -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await process.wait()
    return time.perf_counter() - start


async def raw(argv: Sequence[str]) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    _out, err = await process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {err.decode().strip()}")


async def raw_together(*argvs: Sequence[str]) -> None:
    await asyncio.gather(*(raw(argv) for argv in argvs))


async def median(calls: int, call: Callable[[], Awaitable[Any]]) -> float:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def main(repeat: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        params = server_params(home)
        idle = statistics.median([await idle_interpreter() for _ in range(repeat)])
        startup = [await spawn_to_initialize(params) for _ in range(repeat)]
        print(f"spawn -> initialize answered, medians of {repeat} cold servers")
        print(f"  python3 -c pass          {idle * 1000:7.1f} ms")
        print(f"  svc mcp initialize       {statistics.median(startup) * 1000:7.1f} ms (goal < 800 ms)")

        async with Client(params) as client:

            async def tool(tool_name: str, **arguments: Any) -> dict[str, Any]:
                result = await client.call_tool(tool_name, arguments)
                content: dict[str, Any] | None = result.structured_content
                if not content or not content.get("success"):
                    raise SystemExit(f"{tool_name} failed: {content}")
                return content

            rows: list[tuple[str, float, float, str, float]] = []
            start = time.perf_counter()
            await tool("get_resources")
            first = time.perf_counter() - start
            resources = await median(calls, lambda: tool("get_resources"))
            rows.append(
                (
                    "get_resources",
                    first,
                    resources,
                    "sinfo & squeue",
                    await median(calls, lambda: raw_together(sinfo_argv(), squeue_argv())),
                )
            )
            rows.append(("", 0.0, resources, "sinfo alone", await median(calls, lambda: raw(sinfo_argv()))))
            start = time.perf_counter()
            await tool("list_jobs")
            first = time.perf_counter() - start
            rows.append(
                (
                    "list_jobs",
                    first,
                    await median(calls, lambda: tool("list_jobs")),
                    "squeue --user",
                    await median(calls, lambda: raw(squeue_argv(user=getpass.getuser()))),
                )
            )
            job_id = (await tool("submit_job", command="sleep 600", name="bench-mcp", partition="debug"))["job_id"]
            try:
                start = time.perf_counter()
                await tool("get_job_status", job_id=job_id)
                first = time.perf_counter() - start
                rows.append(
                    (
                        "get_job_status",
                        first,
                        await median(calls, lambda: tool("get_job_status", job_id=job_id)),
                        "squeue --jobs",
                        await median(calls, lambda: raw(squeue_argv([job_id]))),
                    )
                )
            finally:
                await tool("cancel_job", job_id=job_id)
    print(f"tools in one warm server (local Slurm), medians of {calls} calls; first call apart")
    print(f"  {'tool':16} {'first':>8} {'median':>8}   {'raw':14} {'median':>8}   ratio (goal <= 1.3x)")
    for name, first, ours, raw_name, theirs in rows:
        shown = f"{name:16} {first * 1000:6.1f}ms {ours * 1000:6.1f}ms" if name else " " * 34
        print(f"  {shown}   {raw_name:14} {theirs * 1000:6.1f}ms   {ours / theirs:4.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.repeat, args.calls))
