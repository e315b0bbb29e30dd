"""Benchmark: what seeing profile changes and finding the login directory cost a running server.

Needs the dev cluster (``scripts/devcluster up``). In a temporary svc home with ten profiles (one is the dev
cluster's loopback sshd), it times, per call (median of ``--repeat``):

* ``os.stat`` of the profiles file (the raw cost of noticing a change) against ``host.transports.config``
  on an unchanged file (what every tool, endpoint and run pays now) and against reading and validating the
  file every time (what re-reading without the ``stat`` check would cost);
* a raw ``ssh ... pwd`` (a new OpenSSH connection, as a script would find the login directory) and ``pwd``
  over svc's kept asyncssh connection, against ``SSHTransport.login_dir()`` on a warm connection (kept per
  connection: no command at all).

    python bench/profile_changes.py [--repeat 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from devcluster import dev_profile

from svc_host.host import Host
from svc_host.settings.paths import SvcPaths
from svc_host.transports.base import SlurmTransport


def median_sync(repeat: int, call: Callable[[], Any]) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def median_async(repeat: int, call: Callable[[], Awaitable[Any]]) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def show(label: str, seconds: float) -> None:
    print(f"{label:<58} {seconds * 1e6:>10.1f} us")


async def main(repeat: int) -> None:
    profile = dev_profile()
    with tempfile.TemporaryDirectory() as tmp:
        paths = SvcPaths(
            system_config=Path(tmp) / "etc" / "config.json",
            user_config_dir=Path(tmp) / "config",
            state_dir=Path(tmp) / "state",
            project_dir=Path(tmp),
        )
        host = Host.create("mcp", paths=paths, read_env=False)
        host.profiles.create("dev", profile)
        for index in range(9):
            host.profiles.create(f"other{index}", profile.model_copy(update={"port": 2200 + index}))
        try:
            print(f"profiles file: {paths.profiles_file.stat().st_size} bytes, 10 profiles; median of {repeat} calls")
            profiles_file = paths.profiles_file
            show("raw: os.stat(profiles file)", median_sync(repeat, lambda: os.stat(profiles_file)))
            show("svc: host.transports.config (file unchanged)", median_sync(repeat, lambda: host.transports.config))
            show(
                "without the stat check: read + validate the file",
                median_sync(repeat, lambda: host.profiles.host_config(env=None)),
            )

            ssh = [
                "ssh", "-p", str(profile.port), "-i", profile.key_filename, "-o", "BatchMode=yes",
                "-o", f"UserKnownHostsFile={profile.known_hosts}", f"{profile.username}@{profile.hostname}", "pwd",
            ]  # fmt: skip
            rounds = max(5, repeat // 200)
            show(
                f"raw: ssh ... pwd (new connection; median of {rounds})",
                median_sync(rounds, lambda: subprocess.run(ssh, capture_output=True, check=True)),
            )
            transport = host.transport("dev")
            assert isinstance(transport, SlurmTransport)
            await transport.check(["true"])  # connect first
            show(
                f"raw: pwd over svc's kept connection (median of {rounds})",
                await median_async(rounds, lambda: transport.check(["pwd"])),
            )
            print(f"login directory: {await transport.login_dir()}")
            show("svc: transport.login_dir() (warm connection)", await median_async(repeat, transport.login_dir))
        finally:
            await host.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    asyncio.run(main(parser.parse_args().repeat))
