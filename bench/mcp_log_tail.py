"""Benchmark: reading the end of a large job log through MCP ``get_job_logs`` vs ``tail`` and ``cat``.

Needs the dev cluster (``scripts/devcluster up``). Starts ``svc mcp`` over real stdio (the official client,
a temporary svc home with the dev cluster's loopback sshd as profile ``dev``), submits one job locally and
one over SSH that each write ``--mib`` MiB of log lines and end with a traceback, then times, side by side:

* ``get_job_logs(tail_lines=50)`` against ``tail -n 50`` (a local process; over SSH a fresh ``ssh`` process
  per call, which is what an agent without svc would run);
* reading the whole log page by page with ``offset`` against ``cat`` of the same file.

The tail's cost should not grow with the log (svc seeks to the last 256 KiB): run with ``--mib 1`` and
``--mib 64`` to see it.

    python bench/mcp_log_tail.py [--mib 16] [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"}


def dev_env() -> dict[str, str]:
    out = subprocess.run([ROOT / "scripts" / "devcluster", "env"], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def writer(mib: int) -> str:
    lines = mib * 1024 * 1024 // 80
    return (
        f'python3 -c \'import sys\nfor i in range({lines}): print(f"line {{i:08d}} " + "x" * 65)\n'
        'sys.stdout.flush()\nraise RuntimeError("the end")\' 2>&1'
    )


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def p50(repeat: int, call: Callable[[], Awaitable[Any]]) -> float:
    return statistics.median([await timed(call) for _ in range(repeat)])


async def run_argv(argv: list[str]) -> bytes:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {proc.returncode}")
    return out


Tool = Callable[..., Awaitable[dict[str, Any]]]


def server_env(tmp: Path, env: dict[str, str]) -> dict[str, str]:
    """A fresh svc home whose profile ``dev`` is the dev cluster's loopback sshd."""
    home = tmp / "home"
    (home / ".config" / "svc").mkdir(parents=True)
    dev = {
        "hostname": env["SVC_DEV_SSH_HOST"],
        "port": int(env["SVC_DEV_SSH_PORT"]),
        "username": env["SVC_DEV_SSH_USER"],
        "key_filename": env["SVC_DEV_SSH_KEY"],
        "known_hosts": env["SVC_DEV_SSH_KNOWN_HOSTS"],
    }
    (home / ".config" / "svc" / "profiles.json").write_text(json.dumps({"profiles": {"dev": dev}}))
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("SVC_")},
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "SVC_SYSTEM_CONFIG": str(tmp / "etc.json"),
    }


async def submitted(tool: Tool, mib: int, **extra: Any) -> str:
    job = await tool("submit_job", command=writer(mib), name="bench-log", **extra)
    for _ in range(600):
        status = await tool("get_job_status", job_id=job["job_id"], **extra)
        if status["status"] in ENDED:
            return str(job["job_id"])
        await asyncio.sleep(0.5)
    raise SystemExit(f"job {job['job_id']} did not end")


async def measure(tool: Tool, job_id: str, extra: dict[str, Any], raw: list[str], path: str, repeat: int) -> str:
    """The numbers of one job's log: svc's tail and pages next to ``tail`` and ``cat`` run with ``raw``."""
    tail = await tool("get_job_logs", job_id=job_id, tail_lines=50, **extra)
    if tail["stdout"].encode() != await run_argv([*raw, "tail", "-n", "50", path]):
        raise SystemExit(f"get_job_logs' tail of job {job_id} differs from tail -n 50")

    async def pages() -> int:
        offset, count = 0, 0
        while True:
            page = await tool("get_job_logs", job_id=job_id, offset=offset, **extra)
            count += 1
            if not page["stdout_truncated"]:
                return count
            offset = page["stdout_next_offset"]

    svc_tail = await p50(repeat, lambda: tool("get_job_logs", job_id=job_id, tail_lines=50, **extra))
    raw_tail = await p50(repeat, lambda: run_argv([*raw, "tail", "-n", "50", path]))
    count = await pages()
    svc_all = await timed(pages)
    raw_all = await timed(lambda: run_argv([*raw, "cat", path]))
    how = " over a new ssh" if raw else ""
    return (
        f"  log size {tail['stdout_size'] / 2**20:.1f} MiB\n"
        f"  get_job_logs tail_lines=50 (MCP stdio):      {svc_tail * 1000:8.1f} ms p50\n"
        f"  {'tail -n 50' + how + ':':43} {raw_tail * 1000:8.1f} ms p50\n"
        f"  {f'whole log, {count} pages of 256 KiB (MCP):':43} {svc_all * 1000:8.1f} ms\n"
        f"  {'cat' + how + ':':43} {raw_all * 1000:8.1f} ms"
    )


async def main(mib: int, repeat: int) -> None:
    env = dev_env()
    ssh = ["ssh", "-p", env["SVC_DEV_SSH_PORT"], "-i", env["SVC_DEV_SSH_KEY"], "-o", "BatchMode=yes"]
    ssh += ["-o", f"UserKnownHostsFile={env['SVC_DEV_SSH_KNOWN_HOSTS']}"]
    ssh += [f"{env['SVC_DEV_SSH_USER']}@{env['SVC_DEV_SSH_HOST']}"]
    remote_dir = f"svc-bench-logs-{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "svc_host", "mcp"], env=server_env(Path(tmp), env), cwd=work
        )
        async with Client(params) as client:

            async def tool(_name: str, **arguments: Any) -> dict[str, Any]:
                body = (await client.call_tool(_name, arguments)).structured_content
                if not body or not body.get("success"):
                    raise SystemExit(f"{_name} failed: {body}")
                return body

            local_id = await submitted(tool, mib)
            ssh_id = await submitted(tool, mib, transport="dev", work_dir=remote_dir)
            try:
                local = await measure(tool, local_id, {}, [], f"{work}/logs/bench-log-{local_id}.out", repeat)
                remote_log = f"{remote_dir}/logs/bench-log-{ssh_id}.out"
                remote = await measure(tool, ssh_id, {"transport": "dev"}, ssh, remote_log, repeat)
            finally:
                await run_argv([*ssh, "rm", "-rf", "--", remote_dir])
    print(f"log of {mib} MiB per job; tails: p50 of {repeat} calls; whole log: read once")
    print(f"[local]\n{local}\n[ssh]\n{remote}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mib", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=20)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.mib, arguments.repeat))
