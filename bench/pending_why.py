"""Benchmark: ``svc why`` for many pending jobs next to the raw Slurm commands a person would run, and
``svc submit --test-only`` next to ``sbatch --test-only``.

Needs the dev cluster (``scripts/devcluster up``); runs as the user who submits. Submits N held jobs and N jobs too
wide for partition ``multi`` (always pending), then, interleaved so both see the same load:

- raw: per job ``scontrol -o show job ID`` (the reason), then one ``squeue --start`` for all, and for the wide jobs
  one ``sinfo --partition=multi`` (which node is down): what it takes to answer "why" by hand, without the
  sentences;
- ``svc why ID...`` for all 2N jobs in one process (cold: a new interpreter each time);
- in-process ``pending.explain`` for all 2N jobs, counting the scheduler commands it runs;
- ``sbatch --test-only`` and ``svc submit --test-only`` of the same shape.

Prints medians of wall time. Every job is cancelled at the end.

    python bench/pending_why.py [--jobs 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(argv: Sequence[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):  # --test-only may answer "no" with exit 1; anything else stops the bench
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return took


def sbatch(*args: str) -> str:
    done = subprocess.run(
        ["sbatch", "--parsable", "-o", "/dev/null", *args, "--wrap", "true"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip().split(";")[0]


async def in_process(ids: list[str], repeat: int) -> tuple[list[float], Counter[str]]:
    import svc_plugin_local.hooks
    from svc_host.host import Host
    from svc_host.plugin_core.manager import create_plugin_manager
    from svc_host.services import pending
    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.profiles import ProfileStore
    from svc_host.store.database import Store
    from svc_host.transports.base import SlurmTransport

    with tempfile.TemporaryDirectory() as home:
        paths = SvcPaths(Path(home) / "etc.json", Path(home) / "config", Path(home) / "state", Path(home))
        plugins = create_plugin_manager(strict=True, entry_points_too=False)
        plugins.register(svc_plugin_local.hooks, "local", distribution="svc", version="0")
        host = Host(
            paths=paths,
            plugins=plugins,
            profiles=ProfileStore(paths.profiles_file),
            store=Store(f"sqlite:///{home}/svc.db"),
            source="cli",
            read_env=False,
        )
        target = host.transport("local")
        assert isinstance(target, SlurmTransport)
        counted: Counter[str] = Counter()
        run = target.run

        async def counting(argv: Sequence[str], **kwargs: object) -> object:
            counted[next(word for word in argv if word != "env" and "=" not in word)] += 1
            return await run(argv, **kwargs)  # type: ignore[arg-type]

        target.run = counting  # type: ignore[method-assign]
        times = []
        try:
            for _ in range(repeat):
                counted.clear()  # what the last explanation ran
                start = time.perf_counter()
                answers = await pending.explain(host, "local", ids)
                times.append(time.perf_counter() - start)
                assert all(answer["pending"] for answer in answers), answers
            return times, Counter(counted)
        finally:
            await host.close()


def main(jobs: int, repeat: int) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SVC_")}
    svc = [sys.executable, "-m", "svc_host"]
    ids: list[str] = []
    try:
        held = [sbatch("--hold", "-p", "debug", "-J", "bench-held") for _ in range(jobs)]
        wide = [sbatch("-N2", "-p", "multi", "-J", "bench-wide") for _ in range(jobs)]
        ids = held + wide
        deadline = time.monotonic() + 60
        while (
            subprocess.run(
                ["squeue", "-h", "-t", "PD", "-o", "%r", "-j", ",".join(ids)],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.split()
            .count("None")
        ):
            if time.monotonic() > deadline:
                raise SystemExit("the scheduler gave no reason to some jobs in 60 s")
            time.sleep(0.5)
        samples: dict[str, list[float]] = {}
        for _ in range(repeat):
            samples.setdefault("svc --version (new process: start-up alone)", []).append(wall([*svc, "--version"], env))
            start = time.perf_counter()
            for job in ids:
                wall(["scontrol", "-o", "show", "job", job])
            wall(["squeue", "--start", "-j", ",".join(ids)])
            wall(["sinfo", "--partition=multi", "-N"])
            samples.setdefault("raw: scontrol per job + squeue --start + sinfo", []).append(time.perf_counter() - start)
            samples.setdefault("svc why (new process, all jobs)", []).append(wall([*svc, "why", *ids], env))
            samples.setdefault("raw: sbatch --test-only", []).append(
                wall(["sbatch", "--test-only", "-p", "gpu", "--gres=gpu:1", "-t", "5", "--wrap", "true"])
            )
            samples.setdefault("svc submit --test-only (new process)", []).append(
                wall([*svc, "submit", "--test-only", "-p", "gpu", "-G", "1", "--time", "5", "--", "true"], env)
            )
        times, counts = asyncio.run(in_process(ids, repeat))
        samples["svc pending.explain (in process, warm)"] = times[1:] or times
        print(f"{len(ids)} pending jobs ({jobs} held, {jobs} too wide for partition multi); {repeat} runs each")
        for label, values in samples.items():
            print(f"  {label:<52} median {statistics.median(values) * 1000:8.1f} ms")
        print(f"  scheduler commands per pending.explain of {len(ids)} jobs: {dict(counts)}")
        print(f"  raw commands for the same answer by hand: {len(ids)} scontrol + 1 squeue + 1 sinfo")
    finally:
        if ids:
            subprocess.run(["scancel", *ids], check=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    main(options.jobs, options.repeat)
