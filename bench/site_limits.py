"""Benchmark: reading the site's limits, and the throttle's cost per submission, next to the raw commands.

Needs the dev cluster (``scripts/devcluster up``). Side by side, interleaved:

* local: the four commands svc runs (``sacctmgr`` user/assoc/qos, ``scontrol show config``) one after the other
  as subprocesses, vs svc's ``read_site_limits`` (the four at once) and the kept answer (a cached read);
* over SSH (profile ``dev`` on the loopback sshd, in a temporary svc home): one ``ssh`` process running the
  four, vs svc on its one kept connection;
* per submission: one raw ``squeue`` (what a naive throttle would ask before each sbatch) vs the throttle's
  ``try_admit`` (reads the shared, at most 1 s old queue snapshot).

    python bench/site_limits.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from svc_host.domain.profiles import SSHProfile
from svc_host.host import Host
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore
from svc_host.slurm import limits
from svc_host.slurm.argv import squeue_argv
from svc_host.transports.site_limits import read_site_limits

ROOT = Path(__file__).resolve().parent.parent


def dev_env() -> dict[str, str]:
    out = subprocess.run([ROOT / "scripts" / "devcluster", "env"], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def commands(user: str) -> list[list[str]]:
    return [limits.user_argv(user), limits.assoc_argv(), limits.qos_argv(), limits.config_argv()]


async def timed(samples: dict[str, list[float]], label: str, work: Callable[[], Awaitable[object]]) -> None:
    start = time.perf_counter()
    await work()
    samples.setdefault(label, []).append(time.perf_counter() - start)


async def run_raw(argvs: list[list[str]]) -> None:
    for argv in argvs:
        process = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.DEVNULL)
        if await process.wait() != 0:
            raise SystemExit(f"{shlex.join(argv)} failed")


async def main(repeat: int) -> None:
    facts = dev_env()
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as home:
        paths = SvcPaths(Path(home) / "etc.json", Path(home) / "config" / "svc", Path(home) / "state" / "svc", ROOT)
        ProfileStore(paths.profiles_file).create(
            "dev",
            SSHProfile(
                hostname=facts["SVC_DEV_SSH_HOST"],
                port=int(facts["SVC_DEV_SSH_PORT"]),
                username=facts["SVC_DEV_SSH_USER"],
                key_filename=facts["SVC_DEV_SSH_KEY"],
                known_hosts=facts["SVC_DEV_SSH_KNOWN_HOSTS"],
            ),
        )
        host = Host.create("cli", paths=paths, read_env=False)
        ssh = [
            "ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-p", facts["SVC_DEV_SSH_PORT"],
            "-i", facts["SVC_DEV_SSH_KEY"], "-o", f"UserKnownHostsFile={facts['SVC_DEV_SSH_KNOWN_HOSTS']}",
            f"{facts['SVC_DEV_SSH_USER']}@{facts['SVC_DEV_SSH_HOST']}",
        ]  # fmt: skip
        remote = " ; ".join(shlex.join(argv) for argv in commands(facts["SVC_DEV_SSH_USER"]))
        local, dev = host.transport("local"), host.transport("dev")
        await dev.connect()
        try:
            for _ in range(repeat):
                await timed(samples, "raw local: 4 commands in turn", lambda: run_raw(commands("root")))
                await timed(samples, "svc local: read_site_limits", lambda: read_site_limits(local))
                await timed(samples, "svc local: kept answer", lambda: host.transports.snapshots.limits("local"))
                await timed(samples, "raw ssh: one process, 4 commands", lambda: run_raw([[*ssh, remote]]))
                await timed(samples, "svc ssh: read_site_limits (kept connection)", lambda: read_site_limits(dev))
                await timed(samples, "raw: squeue before each sbatch", lambda: run_raw([squeue_argv()]))
                for _ in range(20):
                    await timed(samples, "svc: try_admit per submission", lambda: admit_once(host))
        finally:
            await host.close()
    width = max(len(label) for label in samples)
    for label, values in samples.items():
        print(f"{label:<{width}}  median {statistics.median(values) * 1000:8.2f} ms  (n={len(values)})")


async def admit_once(host: Host) -> None:
    admission = await host.submit_throttle.try_admit("local", qos=None, waiters=["bench"], wake=lambda: None)
    if admission is not None:
        admission.abandon()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    asyncio.run(main(parser.parse_args().repeat))
