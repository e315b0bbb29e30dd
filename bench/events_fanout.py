"""Scheduler commands per second with 1 and with 20 open dashboards on a real ``svc serve``.

The server runs on the dev cluster with ``squeue``/``sacct``/``sinfo``/``scontrol`` wrapped through ``PATH`` so
every invocation is logged. Each phase opens N event streams (``GET /api/events``, as N tabs' EventSources do)
or, with ``--browser``, N real dashboard tabs in headless Chromium (the overview page: gauges, my jobs, runs),
submits the same three short jobs and counts the commands the server ran while they went PENDING -> RUNNING
-> COMPLETED. Tabs are counted once loaded: what an open dashboard costs, not what loading one costs. The
streams only relay the monitor's tick, so the counts should not grow with N.

    python bench/events_fanout.py [--seconds 25] [--streams 1 20] [--browser]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from svc_host.testing.serve import isolated_env, running_serve

TOKEN = "bench-events-token-0123456789abcdef"  # noqa: S105 (a throwaway token for a loopback bench server)
COMMANDS = ("squeue", "sacct", "sinfo", "scontrol")
JOB = "#!/bin/bash\n#SBATCH --job-name=fanout\nsleep {seconds}\n"


def wrap_commands(bin_dir: Path, log: Path) -> None:
    """A logging wrapper in ``bin_dir`` for each Slurm query command, exec'ing the real one."""
    for name in COMMANDS:
        real = shutil.which(name)
        if real is None:
            raise SystemExit(f"{name} not found: bring up the dev cluster (scripts/devcluster up)")
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\necho "{name}" >> "{log}"\nexec "{real}" "$@"\n')
        wrapper.chmod(0o755)


def counts(log: Path) -> dict[str, int]:
    lines = log.read_text().split() if log.exists() else []
    return {name: lines.count(name) for name in COMMANDS}


async def phase(base: str, log: Path, streams: int, seconds: float) -> tuple[dict[str, int], list[int]]:
    """Open ``streams`` event streams, run three jobs, count commands over ``seconds``; returns the counts
    and how many job events each stream received."""
    received = [0] * streams
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=httpx.Timeout(30, read=None)) as client:

        async def read(index: int) -> None:
            async with client.stream("GET", "/api/events", params={"types": "job.status_changed"}) as response:
                async for line in response.aiter_lines():
                    if line.startswith("event: job.status_changed"):
                        received[index] += 1

        readers = [asyncio.create_task(read(i)) for i in range(streams)]
        await asyncio.sleep(1.0)  # every stream open before anything happens
        before = counts(log)
        started = time.monotonic()
        for _ in range(3):
            answer = await client.post("/api/jobs", json={"script_content": JOB.format(seconds=3)})
            answer.raise_for_status()
        await asyncio.sleep(max(0.0, seconds - (time.monotonic() - started)))
        after = counts(log)
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    return {name: after[name] - before[name] for name in COMMANDS}, received


def browser_phase(base: str, log: Path, tabs: int, seconds: float, path: str) -> tuple[dict[str, int], list[int]]:
    """``tabs`` dashboard tabs open on ``path``; returns the commands made while three jobs ran, and how many
    of the jobs each tab showed as finished without a reload."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"], headless=True
        )
        context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 800})
        context.request.post("/api/auth/login", data={"token": TOKEN})  # the session cookie, as the login form gets it
        pages = []
        for _ in range(tabs):
            page = context.new_page()
            page.goto(path)
            page.wait_for_selector("[data-live=on]", state="attached", timeout=60_000)
            pages.append(page)
        time.sleep(3.0)  # loads and their first resync done: from here on, only what open tabs cost
        before = counts(log)
        started = time.monotonic()
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            ids = [
                str(client.post("/api/jobs", json={"script_content": JOB.format(seconds=3)}).json()["job_id"])
                for _ in range(3)
            ]
        time.sleep(max(0.0, seconds - (time.monotonic() - started)))
        after = counts(log)
        shown = [sum(1 for job_id in ids if page.locator(f"a[href='/jobs/{job_id}']").count() == 0) for page in pages]
        browser.close()
    return {name: after[name] - before[name] for name in COMMANDS}, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=25.0, help="length of each phase")
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 20], help="open streams (or tabs) per phase")
    parser.add_argument("--browser", action="store_true", help="real dashboard tabs in Chromium, not bare streams")
    parser.add_argument("--path", default="/", help="the dashboard page the tabs show (with --browser)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="svc-fanout-") as raw:
        root = Path(raw)
        bin_dir, work = root / "bin", root / "work"
        for directory in (bin_dir, work):
            directory.mkdir()
        log = root / "commands.log"
        wrap_commands(bin_dir, log)
        env = isolated_env(root, token=TOKEN)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["SVC_RESOURCE_SAMPLE_SECONDS"] = "10"
        with running_serve(base_env=env, cwd=work, stderr=subprocess.DEVNULL, wait=60) as server:
            base = server.base
            what = "tabs" if options.browser else "streams"
            last = "finished jobs gone from each tab's list" if options.browser else "job events per stream"
            print(f"{what:>7}  {'squeue/s':>8}  {'sacct/s':>7}  {'sinfo/s':>7}  {'scontrol/s':>10}  "
                  f"{'all/s':>6}  {last}")  # fmt: skip
            for streams in options.streams:
                if options.browser:
                    made, received = browser_phase(base, log, streams, options.seconds, options.path)
                else:
                    made, received = asyncio.run(phase(base, log, streams, options.seconds))
                rate = {name: made[name] / options.seconds for name in COMMANDS}
                total = sum(made.values()) / options.seconds
                per_stream = f"{min(received)}-{max(received)}" if received else "-"
                print(
                    f"{streams:>7}  {rate['squeue']:>8.2f}  {rate['sacct']:>7.2f}  {rate['sinfo']:>7.2f}  "
                    f"{rate['scontrol']:>10.2f}  {total:>6.2f}  {per_stream}"
                )


if __name__ == "__main__":
    main()
