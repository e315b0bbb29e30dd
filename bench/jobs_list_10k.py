"""Benchmark: ``GET /api/jobs`` with 10,000 jobs queued, against a raw squeue reading the same fields.

10,000 jobs cannot be held on the shared dev cluster (its MaxJobCount, 10,000, counts every array task: holding
them would refuse everyone else's submissions). So the bench starts a private slurmctld of its own (a throwaway
config and state dir, free ports, no accounting, one node that is never up) with room for 20,000 jobs, submits
``--jobs`` held jobs of assorted shapes to it, and points both sides at it with ``SLURM_CONF``: the raw squeue
and svc's ask the same controller for the same 10,000 rows. Needs root and the dev cluster's munge. Alternating,
``--repeat`` times each, after ``--churn`` more jobs are submitted (a queue changes from one second to the next):

- raw: the squeue svc runs (``svc_host.slurm.argv.squeue_argv``: same fields, same flags), its output read;
- svc cold: ``GET /api/jobs`` (in-process ASGI, ``local`` transport) with the snapshot forced stale, so every
  request runs that squeue, parses it and encodes the list (the first of them with nothing kept from an
  earlier answer: its time is printed on its own);
- svc warm: ``GET /api/jobs`` served from the shared snapshot (what every other client within the second gets).

    python bench/jobs_list_10k.py [--jobs 10000] [--repeat 15] [--churn 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from svc_host.api.app import create_app
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.settings.paths import SvcPaths
from svc_host.slurm.argv import squeue_argv
from svc_host.testing.http import asgi_client, security_for_tests

SLURM_CONF = """\
ClusterName=svcbench10k
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmctldDebug=error
MaxJobCount=20000
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName=benchnode NodeAddr=127.0.0.3 Port={slurmd_port} CPUs=8 RealMemory=8000 Gres=gpu:4 State=DOWN Reason=bench
PartitionName=debug Nodes=benchnode Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=benchnode MaxTime=INFINITE State=UP
"""


def quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_controller(base: Path) -> subprocess.Popen[bytes]:
    """A private slurmctld under ``base``; ``SLURM_CONF`` points every Slurm command of this process at it."""
    (base / "state").mkdir(parents=True)
    conf = base / "slurm.conf"
    conf.write_text(SLURM_CONF.format(dir=base, ctld_port=free_port(), slurmd_port=free_port()))
    os.environ["SLURM_CONF"] = str(conf)
    controller = subprocess.Popen(
        ["slurmctld", "-D", "-i", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(100):
        if subprocess.run(["scontrol", "ping"], capture_output=True, check=False).stdout.count(b"UP"):
            return controller
        time.sleep(0.1)
    controller.terminate()
    raise SystemExit(f"the private slurmctld did not come up (see {base}/slurmctld.log)")


def job_argv(number: int, logs: Path) -> list[str]:
    """A held job of one of several shapes: partition, GPUs, nodes, time limit, name and log path vary."""
    argv = ["sbatch", "--hold", "--parsable", f"--job-name=bench-{number}-{'x' * (number % 7)}"]
    if number % 3:
        argv += ["--partition=gpu", f"--gres=gpu:{number % 4 + 1}"]
    argv += [f"--time={number % 90 + 1}", f"--nodes={number % 2 + 1}" if number % 5 == 0 else "--nodes=1"]
    argv.append(f"--output={logs}/bench-%j.out" if number % 2 else f"--output={logs}/bench-{number}.out")
    return [*argv, "--wrap=true"]


async def submit_jobs(numbers: range, logs: Path, parallel: int = 4) -> None:
    numbers = iter(numbers)

    async def worker() -> None:
        for number in numbers:
            proc = await asyncio.create_subprocess_exec(
                *job_argv(number, logs), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
            )
            _, err = await proc.communicate()
            if proc.returncode:
                raise SystemExit(f"sbatch failed: {err.decode().strip()}")

    await asyncio.gather(*(worker() for _ in range(parallel)))


async def raw_squeue() -> int:
    proc = await asyncio.create_subprocess_exec(
        *squeue_argv(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    return out.count(b"\n")


async def measure(root: Path, jobs: int, repeat: int, churn: int) -> None:
    paths = SvcPaths(root / "etc.json", root / "config", root / "state", root)
    host = Host.create("web", paths=paths, plugins=create_plugin_manager(strict=True))
    try:
        async with asgi_client(create_app(host, security=security_for_tests())) as client:
            await client.get("/api/jobs/99999999")  # the app's first request (store, imports) before the timings
            raw, cold, warm = [], [], []
            first = 0.0
            lines = listed = 0
            for number in range(repeat + 1):
                start = jobs + number * churn
                await submit_jobs(range(start, start + churn), root)  # the queue changes between answers
                started = time.perf_counter()
                lines = await raw_squeue()
                raw.append(time.perf_counter() - started)
                host.transports.snapshots.max_age = 0.0  # stale at once: this request runs squeue
                started = time.perf_counter()
                response = await client.get("/api/jobs")
                took = time.perf_counter() - started
                if number == 0:
                    first = took
                else:
                    cold.append(took)
                response.raise_for_status()
                host.transports.snapshots.max_age = 1.0
                started = time.perf_counter()
                again = await client.get("/api/jobs")
                warm.append(time.perf_counter() - started)
                again.raise_for_status()
                listed = len(response.json())
    finally:
        await host.close()
    print(f"raw squeue printed {lines} lines; GET /api/jobs listed {listed} jobs")
    print(f"raw squeue (same fields)      {quantiles(raw)}")
    base = statistics.median(raw)
    print(f"GET /api/jobs, first request  {first * 1000:7.1f} ms (nothing kept from an earlier answer)")
    print(
        f"GET /api/jobs, fresh squeue   {quantiles(cold)}   p50 {statistics.median(cold) / base:.2f}x raw (goal 1.3x)"
    )
    print(f"GET /api/jobs, from snapshot  {quantiles(warm)}   p50 {statistics.median(warm) / base:.2f}x raw")


async def main(jobs: int, repeat: int, churn: int) -> None:
    with tempfile.TemporaryDirectory(prefix="svc-bench-10k-") as tmp:
        root = Path(tmp)
        controller = start_controller(root / "slurm")
        try:
            started = time.perf_counter()
            await submit_jobs(range(jobs), root)
            print(f"private slurmctld: {jobs} held jobs submitted in {time.perf_counter() - started:.0f} s")
            await measure(root, jobs, repeat, churn)
        finally:
            controller.terminate()
            controller.wait(timeout=30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--churn", type=int, default=20, help="jobs submitted before each round")
    options = parser.parse_args()
    asyncio.run(main(options.jobs, options.repeat, options.churn))
