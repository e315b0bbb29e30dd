"""Benchmark: ``svc mcp`` from spawn to an answered opening request and a first tool answer, for every kind of
client, and per-tool latency vs the raw Slurm command.

Needs the local Slurm of the dev cluster (``scripts/devcluster up``). Runs ``python -m svc_host mcp`` in a temporary
svc home:

* for each client (``bench/mcp_clients.py``: Python's ``ClientSession.initialize``, the SDK's ``mcp.Client``, the
  TypeScript SDK's ``Client`` when Node is present, a client without any SDK that shows the server's own time, and
  ``srunx-mcp`` side by side when it is installed) and each of
  ``list_jobs`` and ``get_resources``, new server processes (cold): spawn -> ``initialize`` (or
  ``server/discover``) answered; the client asks for the tool list without waiting for it (as agent hosts do at
  connect); spawn -> the answer of the tool called right after (back to back); the tool called 2 s after spawn
  (an agent that spawns its servers at launch and calls them later) next to the same call in that server once it
  has long been up (warm, each after the ~1 s snapshot expired), next to the idle interpreter
  (``python3 -c pass``);
* in one warm server (``mcp.Client``): ``get_resources`` (local) vs the two commands it wraps, raw ``sinfo`` and
  ``squeue`` with svc's columns run at the same time, ``list_jobs`` vs raw ``squeue --user``, and
  ``get_job_status`` of a live job the server submitted (tracked: the store, after the monitor's refresh) vs raw
  ``squeue --jobs``. The raw commands are spawned from this process the way the local transport spawns them. Each
  tool is timed back to back (a shared snapshot at most ~1 s old may answer) and fresh (called after the snapshot
  expired, so svc runs the scheduler command itself); the first call of each tool is shown apart.

Goals: opening answered < 0.3 s; a call 2 s after spawn <= 1.2x a warm one; the back-to-back first answer no
slower than srunx-mcp's; every tool <= 1.3x its raw command. Also timed: the MCP round trip alone (a call refused
before it runs anything, fresh and back to back), the floor under every fresh call.

    python bench/mcp_startup.py [--repeat 5] [--calls 20] [--openings-only] [--ts-sdk DIR] [--srunx-mcp CMD]
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_clients import Sample, client_session, new_client, raw_jsonrpc, sample, typescript_sample, typescript_sdk

from svc_host.slurm.argv import sinfo_argv, squeue_argv

SNAPSHOT_EXPIRED = 1.2
"""Seconds between calls for a fresh answer: past the ~1 s age of the scheduler snapshots svc's lists share."""


def server_params(home: str) -> StdioServerParameters:
    # PYTHONDONTWRITEBYTECODE left out: an installed svc has its modules compiled (pip compiles them), so only the
    # first spawn of a run compiles a source tree's modules, not every spawn
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CONFIG_HOME=f"{home}/config", XDG_STATE_HOME=f"{home}/state", SVC_SYSTEM_CONFIG=f"{home}/etc.json")
    return StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=env, cwd=home)


LATER = 2.0
"""Seconds after spawn at which an agent that spawned its server at launch makes its first call."""
WARM_CALLS = 3


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


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def side_by_side(
    calls: int, ours: Callable[[], Awaitable[Any]], theirs: Callable[[], Awaitable[Any]]
) -> tuple[float, float, float]:
    """Medians of svc back to back, svc fresh (each call after the ~1 s snapshot expired, not counting the pause)
    and the raw command(s), taken in turn so that the machine's load weighs on all of them alike. The raw command
    runs after the same pause as a fresh call: on a busy machine the first process to wake after a pause waits
    longer for a core, whoever it is."""
    burst, fresh, raw_samples = [], [], []
    for _ in range(calls):
        await asyncio.sleep(SNAPSHOT_EXPIRED)
        fresh.append(await timed(ours))
        burst.append(await timed(ours))
        await asyncio.sleep(SNAPSHOT_EXPIRED)
        raw_samples.append(await timed(theirs))
    return statistics.median(burst), statistics.median(fresh), statistics.median(raw_samples)


Taker = Callable[[StdioServerParameters, str, float | None], Awaitable[Sample]]


def takers(ts_dir: Path) -> list[tuple[str, Taker]]:
    """The clients of this run, by the name printed."""
    found: list[tuple[str, Taker]] = [
        (
            "ClientSession.initialize",
            lambda p, tool, at: sample(client_session, p, tool, at, WARM_CALLS, SNAPSHOT_EXPIRED),
        ),
        ("mcp.Client (discover)", lambda p, tool, at: sample(new_client, p, tool, at, WARM_CALLS, SNAPSHOT_EXPIRED)),
        ("no SDK (raw JSON-RPC)", lambda p, tool, at: sample(raw_jsonrpc, p, tool, at, WARM_CALLS, SNAPSHOT_EXPIRED)),
    ]
    ts_version = typescript_sdk(ts_dir)
    if ts_version is None:
        print("TypeScript SDK client: skipped (no node/npm on PATH)")
    else:
        found.append(
            (
                f"TypeScript SDK {ts_version}",
                lambda p, tool, at: typescript_sample(ts_dir, p, tool, at, WARM_CALLS, SNAPSHOT_EXPIRED),
            )
        )
    return found


OPENING_TOOLS = ("list_jobs", "get_resources")
"""The tools timed on cold servers: each runs its scheduler command (``squeue``; ``sinfo`` and ``squeue``)."""


async def openings(params: StdioServerParameters, repeat: int, ts_dir: Path, srunx: tuple[str, str] | None) -> None:
    """Each client against cold servers, taken in turn so that the machine's load weighs on all of them alike."""
    clients = takers(ts_dir)
    rows: dict[tuple[str, str], list[Sample]] = {(name, tool): [] for name, _ in clients for tool in OPENING_TOOLS}
    theirs: list[Sample] = []
    idle = []
    loads = [os.getloadavg()[0]]
    for _ in range(repeat):
        idle.append(await idle_interpreter())
        for tool in OPENING_TOOLS:
            for name, take in clients:
                rows[name, tool].append(await take(params, tool, None))
                rows[name, tool].append(await take(params, tool, LATER))
        if srunx is not None:
            command, tool = srunx
            srunx_params = StdioServerParameters(command=command, args=[], env=dict(os.environ))
            theirs.append(await sample(client_session, srunx_params, tool, None, 0, 0))
        loads.append(os.getloadavg()[0])
    print(f"svc mcp cold: spawn -> answers, medians of {repeat} servers per cell; load average {min(loads):.1f}-"
          f"{max(loads):.1f}")  # fmt: skip
    print(f"  python3 -c pass: {ms(statistics.median(idle))}")
    print(
        f"  {'client':26} {'tool':14} {'initialize':>10} {'b2b first':>10} {'at 2 s':>9} {'warm':>9}  at 2 s / warm"
        "  (sent at)"
    )
    for (name, tool), samples in rows.items():
        warm = statistics.median(statistics.median(s["warm"]) for s in samples if "warm" in s)
        later, sent = median(samples, "later"), median(samples, "sent")
        first, hello = median(samples, "first"), median(samples, "initialize")
        print(
            f"  {name:26} {tool:14} {ms(hello):>10} {ms(first):>10} {ms(later):>9} {ms(warm):>9}  {later / warm:5.2f}x"
            f"          ({ms(sent).strip()})"
        )
    if srunx is None:
        print("  srunx-mcp: skipped (not installed; --srunx-mcp CMD names its command)")
    else:
        name = f"srunx-mcp ({srunx[1]})"
        print(f"  {name:41} {ms(median(theirs, 'initialize')):>10} {ms(median(theirs, 'first')):>10}")
    print(f"goals: initialize < 300 ms; at 2 s ({LATER} s after spawn) <= 1.2x warm; b2b first <= srunx-mcp's")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:6.0f} ms"


def median(samples: list[Sample], key: str) -> float:
    middle: float = statistics.median(s[key] for s in samples if key in s)
    return middle


async def main(repeat: int, calls: int, *, tools: bool, ts_dir: Path, srunx: tuple[str, str] | None) -> None:
    with tempfile.TemporaryDirectory() as home:
        params = server_params(home)
        await openings(params, repeat, ts_dir, srunx)
        if not tools:
            return

        async with Client(params) as client:

            async def tool(tool_name: str, **arguments: Any) -> dict[str, Any]:
                result = await client.call_tool(tool_name, arguments)
                content: dict[str, Any] | None = result.structured_content
                if not content or not content.get("success"):
                    raise SystemExit(f"{tool_name} failed: {content}")
                return content

            async def refused() -> None:  # checked before anything runs: the MCP round trip and svc's tool wrapper
                result = await client.call_tool("get_job_status", {"job_id": "not-a-job"})
                if not result.structured_content or result.structured_content.get("success") is not False:
                    raise SystemExit(f"get_job_status('not-a-job') was not refused: {result.structured_content}")

            rows: list[tuple[str, float, tuple[float, float, float], str]] = []
            first = await timed(lambda: tool("get_resources"))
            measured = await side_by_side(
                calls, lambda: tool("get_resources"), lambda: raw_together(sinfo_argv(), squeue_argv())
            )
            rows.append(("get_resources", first, measured, "sinfo & squeue"))
            first = await timed(lambda: tool("list_jobs"))
            measured = await side_by_side(
                calls, lambda: tool("list_jobs"), lambda: raw(squeue_argv(user=getpass.getuser()))
            )
            rows.append(("list_jobs", first, measured, "squeue --user"))
            job_id = (await tool("submit_job", command="sleep 600", name="bench-mcp", partition="debug"))["job_id"]
            try:
                first = await timed(lambda: tool("get_job_status", job_id=job_id))
                measured = await side_by_side(
                    calls, lambda: tool("get_job_status", job_id=job_id), lambda: raw(squeue_argv([job_id]))
                )
                rows.append(("get_job_status", first, measured, "squeue --jobs"))
            finally:
                await tool("cancel_job", job_id=job_id)
            floor = await side_by_side(calls, refused, lambda: raw(squeue_argv(user=getpass.getuser())))
    print(f"tools in one warm server (local Slurm), medians of {calls} calls of each kind; first call apart")
    print("  back to back: within a second of the previous call (a shared snapshot may answer);")
    print(f"  fresh: {SNAPSHOT_EXPIRED} s after the previous call (the snapshot expired: svc queries the scheduler)")
    header = f"  {'tool':16} {'first':>8} {'b2b':>8} {'fresh':>8}   {'raw':14} {'median':>8}"
    print(f"{header}   ratio b2b / fresh (goal <= 1.3x)")
    for name, first, (burst, fresh, theirs), raw_name in rows:
        print(
            f"  {name:16} {first * 1000:6.1f}ms {burst * 1000:6.1f}ms {fresh * 1000:6.1f}ms   {raw_name:14} "
            f"{theirs * 1000:6.1f}ms   {burst / theirs:4.2f}x / {fresh / theirs:4.2f}x"
        )
    burst, fresh, theirs = floor
    print(
        f"the round trip alone (get_job_status of 'not-a-job', refused before any command): {burst * 1000:.1f} ms "
        f"back to back, {fresh * 1000:.1f} ms fresh, {fresh / theirs:.2f}x the raw squeue --user "
        f"({theirs * 1000:.1f} ms)"
    )
    print(f"  so a fresh call that runs that squeue can be no faster than {1 + fresh / theirs:.2f}x it")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--openings-only", action="store_true", help="only the cold servers, not the tools")
    parser.add_argument(
        "--ts-sdk",
        type=Path,
        default=Path(tempfile.gettempdir()) / "svc-bench-mcp-ts",
        help="where @modelcontextprotocol/sdk is installed from npm (outside the repository)",
    )
    parser.add_argument("--srunx-mcp", default=shutil.which("srunx-mcp"), help="srunx's MCP server command")
    parser.add_argument("--srunx-tool", default="list_jobs", help="the srunx-mcp tool called back to back")
    args = parser.parse_args()
    srunx = (args.srunx_mcp, args.srunx_tool) if args.srunx_mcp else None
    asyncio.run(main(args.repeat, args.calls, tools=not args.openings_only, ts_dir=args.ts_sdk, srunx=srunx))
