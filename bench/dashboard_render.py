"""How long the dashboard's Jobs page takes to render 500 jobs, measured in Chromium through Playwright.

Starts ``svc serve`` on a loopback port with its own home and a store holding 500 finished jobs (history rows of
every final state), logs a browser in, then loads ``/jobs`` several times and reports, per load, the time from
navigation start until the page has drawn every row (the router marks ``.page[data-ready]`` after the page's
render resolves), and the time to re-sort and re-filter the 500 rows in the page. Needs Debian's chromium
(scripts/browser) and Slurm answering (the page also lists the live queue).

    python bench/dashboard_render.py [--jobs 500] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlmodel import Session

from svc_host.store.database import Store
from svc_host.store.tables import JobRecord
from svc_host.testing.serve import isolated_env, running_serve

TOKEN = "bench-render-token-0123456789abcdef"  # noqa: S105 (a throwaway token for the bench server)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STATES = ["COMPLETED"] * 6 + ["FAILED", "FAILED", "CANCELLED", "TIMEOUT"]


def seed(database_url: str, count: int) -> None:
    """``count`` finished jobs, newest first, spread over the last two weeks (no live job: nothing to poll)."""
    store = Store(database_url)
    now = datetime.now(UTC)

    def insert(session: Session) -> None:
        for i in range(count):
            state = STATES[i % len(STATES)]
            submitted = now - timedelta(minutes=40 * i + 5)
            elapsed = 60 + (i * 37) % 5400
            session.add(
                JobRecord(
                    transport="local",
                    job_id=str(900_000 + i),
                    name=f"train-{i:03d}-lr{(i % 7) + 1}e-4",
                    source=["web", "cli", "mcp", "workflow"][i % 4],
                    state=state,
                    raw_state=state,
                    exit_code=0 if state == "COMPLETED" else (1 if state == "FAILED" else None),
                    partition=["gpu", "debug"][i % 2],
                    nodes=1 + i % 2,
                    gpus=(i % 4) * (1 + i % 2),
                    resources=json.dumps(
                        {"nodes": 1 + i % 2, "gpus_per_node": i % 4, "partition": ["gpu", "debug"][i % 2]}
                    ),
                    command=json.dumps(["python", "train.py", "--lr", f"{(i % 7) + 1}e-4", "--seed", str(i)]),
                    submitted_at=submitted,
                    started_at=submitted + timedelta(seconds=20),
                    ended_at=submitted + timedelta(seconds=20 + elapsed),
                    updated_at=submitted + timedelta(seconds=20 + elapsed),
                    elapsed_seconds=elapsed,
                )
            )

    store.call(insert)
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="svc-bench-render-") as tmp:
        root = Path(tmp)
        database_url = f"sqlite:///{root / 'svc.db'}"
        seed(database_url, args.jobs)
        env = isolated_env(root, token=TOKEN) | {"SVC_DATABASE_URL": database_url}
        with running_serve(base_env=env, cwd=root, stderr=subprocess.DEVNULL, wait=60) as server:
            base = server.base
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.request.post(f"{base}/api/auth/login", data={"token": TOKEN})  # as the login form does
                page.goto(f"{base}/")
                page.wait_for_selector(".page[data-ready=true]")
                loads, draws, arrivals, sorts = [], [], [], []
                for _ in range(args.runs):
                    page.goto(f"{base}/jobs")
                    page.wait_for_selector(".page[data-ready=true]")
                    rows = page.locator("#jobs-table tbody tr").count()
                    if rows < args.jobs:
                        raise SystemExit(f"the Jobs page shows {rows} rows, expected at least {args.jobs}")
                    marks = page.evaluate(
                        """() => Object.fromEntries(['svc-jobs-data', 'svc-jobs-drawn', 'svc-page-ready']
                          .map((name) => [name, performance.getEntriesByName(name).pop().startTime]))"""
                    )
                    loads.append(marks["svc-page-ready"])
                    draws.append(marks["svc-jobs-drawn"] - marks["svc-jobs-data"])
                    arrivals.append(marks["svc-jobs-data"])
                    sorts.append(
                        page.evaluate(
                            """() => { const t0 = performance.now();
                          document.querySelector('#jobs-table th:nth-child(2) button').click();
                          return performance.now() - t0; }"""
                        )
                    )
                browser.close()

    print(f"Jobs page, {args.jobs} jobs, {args.runs} loads in Chromium (headless, 1280x800):")
    print(f"  navigation start -> all rows drawn: median {statistics.median(loads):.0f} ms, max {max(loads):.0f} ms")
    print(f"  the queue and the history arrived (both fetched at once): median {statistics.median(arrivals):.0f} ms")
    print(f"  of which building the table from the fetched rows: median {statistics.median(draws):.0f} ms")
    print(f"  re-sort of {args.jobs} rows in the page: median {statistics.median(sorts):.1f} ms")


if __name__ == "__main__":
    main()
