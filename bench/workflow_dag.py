"""Benchmark: a 100-job DAG through the REST API and the one workflow engine, on the dev cluster.

Ten layers of ten short jobs; every job after the first layer depends on two jobs of the layer before.
Measures the time from ``POST /api/workflows/{name}/run`` to the 202 answer (every job is in Slurm then:
nothing has retries, so nothing waits in svc), the scheduler commands it took, and, while the run goes
on, the scheduler commands per monitor tick (the engine itself never asks the scheduler anything).
Cleans up after itself (state in a temp dir, live jobs cancelled).

    python bench/workflow_dag.py [--layers 10] [--width 10] [--sleep 1]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.plugin_core.records import TransportSpec
from svc_host.settings.paths import SvcPaths
from svc_host.slurm.argv import program
from svc_host.testing.http import asgi_client, security_for_tests
from svc_host.transports.base import CommandResult
from svc_plugin_local.transport import LocalTransport

COMMANDS: list[str] = []


class CountingTransport(LocalTransport):
    """The local transport, counting every command it runs."""

    async def run(self, argv: Sequence[str], **kwargs: Any) -> CommandResult:
        COMMANDS.append(program(argv))
        return await super().run(argv, **kwargs)


class CountingPlugin:
    @hookimpl
    def svc_transports(self, config: HostConfig) -> list[TransportSpec]:
        return [TransportSpec(name="local", factory=CountingTransport, description="counting local transport")]


def dag(layers: int, width: int, sleep: float) -> str:
    lines = ["name: bench-dag", "jobs:"]
    for layer in range(layers):
        for index in range(width):
            name = f"l{layer}j{index}"
            lines.append(f"  - name: {name}")
            lines.append(f"    command: sleep {sleep}")
            lines.append("    log_dir: logs")
            if layer:
                parents = sorted({f"l{layer - 1}j{index}", f"l{layer - 1}j{(index + 1) % width}"})
                lines.append(f"    depends_on: [{', '.join(parents)}]")
    return "\n".join(lines) + "\n"


async def main(layers: int, width: int, sleep: float) -> None:
    from svc_host.api.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.chdir(base)
        paths = SvcPaths(
            system_config=base / "etc.json", user_config_dir=base / "config", state_dir=base / "state", project_dir=base
        )
        plugins = create_plugin_manager(strict=True, entry_points_too=False)
        plugins.register(CountingPlugin(), "counting-local")
        host = Host.create("web", paths=paths, plugins=plugins, read_env=False)
        async with asgi_client(create_app(host, security=security_for_tests())) as client:
            text = dag(layers, width, sleep)
            assert (await client.post("/api/workflows/upload", json={"yaml": text, "filename": "dag.yaml"})).is_success
            COMMANDS.clear()
            started = time.perf_counter()
            response = await client.post("/api/workflows/dag/run")
            submitted = time.perf_counter() - started
            assert response.status_code == 202, response.text
            run = response.json()
            launch_commands = collections.Counter(COMMANDS)
            COMMANDS.clear()
            ticks_before = host.monitor.ticks.get("local", 0)
            try:
                while True:
                    body = (await client.get(f"/api/workflows/runs/{run['id']}")).json()
                    if body["status"] not in ("running", "submitting"):
                        break
                    await asyncio.sleep(2)
                finished = time.perf_counter() - started
            finally:
                if body["status"] not in ("completed", "failed", "cancelled"):
                    await client.post(f"/api/workflows/runs/{run['id']}/cancel")
            ticks = host.monitor.ticks.get("local", 0) - ticks_before
            watch_commands = collections.Counter(COMMANDS)
        await host.close()
    jobs = layers * width
    print(f"jobs: {jobs} ({layers} layers x {width}, each after 2 of the layer before; sleep {sleep} s)")
    rate = jobs / submitted
    print(f"POST run -> 202 with all {len(run['job_ids'])} jobs submitted: {submitted:.2f} s ({rate:.0f} jobs/s)")
    print(f"  scheduler commands while submitting: {dict(launch_commands)}")
    print(f"run {body['status']} after {finished:.1f} s")
    per_tick = sum(watch_commands.values()) / ticks if ticks else float("nan")
    print(f"monitor ticks while running: {ticks}; scheduler commands: {dict(watch_commands)}")
    print(f"scheduler commands per monitor tick: {per_tick:.2f} (engine: 0; it only reacts to the monitor)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--layers", type=int, default=10)
    parser.add_argument("--width", type=int, default=10)
    parser.add_argument("--sleep", type=float, default=1.0)
    options = parser.parse_args()
    asyncio.run(main(options.layers, options.width, options.sleep))
