"""Load on a real ``svc serve``: N clients for S seconds, and the scheduler commands per second they cost.

The server runs on the dev cluster (``local`` transport) with ``squeue``/``sacct``/``sinfo``/``scontrol`` wrapped
through ``PATH`` so every invocation is logged. It tracks ``--held`` jobs it submitted held (pending, holding no
resources), so the monitor ticks and the queue lists them. Each phase runs N closed-loop clients (each sends its
next request as soon as the last one answered, no pause) alternating ``GET /api/jobs`` and ``GET /api/resources``
(what an open dashboard reads), and prints requests, errors, latency percentiles and the commands per second.
Before the phases it times the raw ``squeue`` and ``sinfo`` svc runs, one after another, side by side.

Shared snapshots (``X-Svc-Snapshot-Age``) and single flight keep the commands per second flat as N grows.
The load generator runs in this process, on the same 2 cores as the server.

``--mixed`` runs the phases on five paths instead of two: each client cycles through ``GET /api/jobs``,
``/api/resources``, ``/api/history``, ``/api/workflows`` and ``/api/config`` (``--workflows`` workflow files
are created first), and the table gets one line per path. ``--log-level info`` turns uvicorn's access log on,
as ``svc serve`` runs by default (the log goes to a file; the default here, ``warning``, leaves it off).

    python bench/api_load.py [--seconds 30] [--clients 1 10 50] [--held 20]
    python bench/api_load.py --mixed --log-level info --seconds 20 --clients 1 50
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from events_fanout import COMMANDS, counts, wrap_commands

from svc_host.slurm.argv import sinfo_argv, squeue_argv
from svc_host.testing.serve import isolated_env, running_serve

TOKEN = "bench-load-token-0123456789abcdef"  # noqa: S105 (a throwaway token for a loopback bench server)
HELD = "#!/bin/bash\n#SBATCH --job-name=api-load\n#SBATCH --hold\ntrue\n"
PATHS = ("/api/jobs", "/api/resources")
MIXED_PATHS = ("/api/jobs", "/api/resources", "/api/history", "/api/workflows", "/api/config")
SNAPSHOT_PATHS = frozenset(PATHS)
"""Paths served from a shared snapshot: their answers carry ``X-Svc-Snapshot-Age``."""


def percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def raw_timings(argv: list[str], repeat: int) -> list[float]:
    """Seconds of ``repeat`` runs of ``argv``, sorted."""
    taken = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        taken.append(time.perf_counter() - started)
    return sorted(taken)


class Connection:
    """One keep-alive HTTP/1.1 connection; a bare client, so the load generator costs the shared cores little."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in head[1:] if line)}
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return int(head[0].split()[1]), headers, body


async def phase(
    port: int, clients: int, seconds: float, paths: tuple[str, ...]
) -> tuple[dict[str, list[float]], list[str]]:
    """``clients`` closed-loop clients for ``seconds``, each cycling through ``paths``; returns the latencies
    (sorted) per path and the errors."""
    latencies: dict[str, list[float]] = {path: [] for path in paths}
    errors: list[str] = []
    deadline = time.monotonic() + seconds

    async def one_client(index: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        connection = Connection(reader, writer, f"127.0.0.1:{port}")
        turn = index
        try:
            while time.monotonic() < deadline:
                path = paths[turn % len(paths)]
                turn += 1
                started = time.perf_counter()
                try:
                    status, headers, body = await connection.get(path)
                except (OSError, asyncio.IncompleteReadError) as exc:
                    errors.append(f"{path}: {exc!r}")
                    return
                latencies[path].append(time.perf_counter() - started)
                if status != 200 or (path in SNAPSHOT_PATHS and "x-svc-snapshot-age" not in headers):
                    errors.append(f"{path}: {status} {body[:120]!r}")
        finally:
            writer.close()

    await asyncio.gather(*(one_client(i) for i in range(clients)))
    return {path: sorted(taken) for path, taken in latencies.items()}, errors


async def submit_held(base: str, count: int) -> list[str]:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=60) as client:
        ids = []
        for _ in range(count):
            answer = await client.post("/api/jobs", json={"script_content": HELD})
            answer.raise_for_status()
            ids.append(str(answer.json()["job_id"]))
        return ids


async def create_workflows(base: str, count: int) -> None:
    """``count`` workflow files of a few jobs each, for ``GET /api/workflows`` to list."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=60) as client:
        for index in range(count):
            jobs: list[dict[str, object]] = [{"name": "step0", "command": "echo 0"}]
            jobs += [{"name": f"step{n}", "command": f"echo {n}", "depends_on": [f"step{n - 1}"]} for n in range(1, 5)]
            answer = await client.post("/api/workflows/create", json={"name": f"bench{index}", "jobs": jobs})
            answer.raise_for_status()


def row(label: str, latencies: list[float], errors: int, seconds: float, rates: str) -> str:
    if not latencies:
        return f"{label:>16}  {0:>8}  {errors:>6}"
    return (
        f"{label:>16}  {len(latencies):>8}  {errors:>6}  {len(latencies) / seconds:>6.0f}  "
        f"{statistics.median(latencies) * 1000:>6.0f}  {percentile(latencies, 0.95) * 1000:>6.0f}  "
        f"{latencies[-1] * 1000:>6.0f}  {rates}"
    ).rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each phase")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 10, 50], help="clients per phase")
    parser.add_argument("--held", type=int, default=20, help="held jobs the server tracks during the phases")
    parser.add_argument("--raw-repeat", type=int, default=20, help="raw squeue/sinfo runs to time")
    parser.add_argument("--mixed", action="store_true", help="cycle through five paths, not the two cached lists")
    parser.add_argument("--workflows", type=int, default=5, help="workflow files to create for --mixed")
    parser.add_argument("--log-level", default="warning", help="svc serve's; info turns the access log on")
    options = parser.parse_args()

    for label, argv in (("squeue", squeue_argv()), ("sinfo", sinfo_argv())):
        taken = raw_timings(argv, options.raw_repeat)
        print(
            f"raw {label:<6} (what svc runs, {options.raw_repeat} runs one after another): "
            f"p50 {statistics.median(taken) * 1000:.1f} ms  p95 {percentile(taken, 0.95) * 1000:.1f} ms  "
            f"=> at most {1 / statistics.median(taken):.0f}/s if every request ran its own"
        )

    with tempfile.TemporaryDirectory(prefix="svc-load-") as raw:
        root = Path(raw)
        bin_dir, work = root / "bin", root / "work"
        for directory in (bin_dir, work):
            directory.mkdir()
        log = root / "commands.log"
        wrap_commands(bin_dir, log)
        env = isolated_env(root, token=TOKEN)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        paths = MIXED_PATHS if options.mixed else PATHS
        server_log = (root / "serve.log").open("w")
        with running_serve(
            base_env=env, cwd=work, stderr=server_log, stdout=server_log, log_level=options.log_level, wait=60
        ) as server:
            held = asyncio.run(submit_held(server.base, options.held))
            if options.mixed:
                asyncio.run(create_workflows(server.base, options.workflows))
            try:
                print(
                    f"svc serve (local transport, --log-level {options.log_level}) tracking {len(held)} held jobs; "
                    f"{options.seconds:g} s per phase; each client cycles through {', '.join(paths)}"
                )
                print(
                    f"{'clients':>7}  {'path':>16}  {'requests':>8}  {'errors':>6}  {'req/s':>6}  {'p50 ms':>6}  "
                    f"{'p95 ms':>6}  {'max ms':>6}  {'squeue/s':>8}  {'sinfo/s':>7}  {'sacct/s':>7}  {'scontrol/s':>10}"
                )
                for clients in options.clients:
                    before = counts(log)
                    latencies, errors = asyncio.run(phase(server.port, clients, options.seconds, paths))
                    after = counts(log)
                    rate = {name: (after[name] - before[name]) / options.seconds for name in COMMANDS}
                    widths = {"squeue": 8, "sinfo": 7, "sacct": 7, "scontrol": 10}
                    rates = "  ".join(f"{rate[name]:>{width}.2f}" for name, width in widths.items())
                    every = sorted(taken for per_path in latencies.values() for taken in per_path)
                    print(f"{clients:>7}  {row('all', every, len(errors), options.seconds, rates)}")
                    if options.mixed:
                        for path, taken in latencies.items():
                            failed = sum(1 for error in errors if error.startswith(f"{path}:"))
                            print(f"{'':>7}  {row(path, taken, failed, options.seconds, '')}")
                    for error in errors[:3]:
                        print(f"         error: {error}")
            finally:
                subprocess.run(["scancel", *held], check=False)
                server_log.close()


if __name__ == "__main__":
    main()
