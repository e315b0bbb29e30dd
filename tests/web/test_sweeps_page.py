"""Sweeps in the browser: six uniform cells started from the workflow page as one job array (two tasks running at a
time), the counters moving live, and a cancel that ends every cell (and its task) CANCELLED. Each cell row is its
own task's (B25): queued while squeue says PENDING, and what it took is sacct's End - Start of the task."""

from __future__ import annotations

import os
import re
import subprocess
import time
from typing import TYPE_CHECKING

import pytest

from svc_host.testing.waiting import eventually_blocking

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

pytestmark = pytest.mark.local_slurm  # squeue and sacct of this machine's 22.05, which `local` reaches

WORKFLOW = """name: sweep-e2e
args:
  x: 1
jobs:
  - name: work
    command: "echo cell {{ x }}; sleep 120"
"""


def test_a_six_cell_sweep_is_one_array_and_cancel_ends_its_cells(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": WORKFLOW, "filename": "sweep-e2e.yaml"})
    page.goto("/workflows/sweep-e2e")
    expect(page.locator(".validity")).to_have_text("✓ valid")
    page.fill("input[aria-label='axis 1 argument']", "x")
    page.fill("input[aria-label='axis 1 values']", "1, 2, 3, 4, 5, 6")
    page.locator(".field", has_text="Max parallel cells").locator("input").fill("2")
    expect(page.locator(".cell-count")).to_have_text("6 cells")
    page.click("button:text-is('Start sweep on local')")
    page.wait_for_url("**/sweeps/*")
    sweep_id = int(page.url.split("?")[0].rsplit("/", 1)[1])  # the page names its cluster: /sweeps/ID?cluster=...

    launched = page.locator("tr[data-status=running], tr[data-status=queued]")
    expect(launched).to_have_count(6, timeout=60_000)  # all submitted at once; Slurm runs two tasks at a time
    # ...and holds four (JobArrayTaskLimit): they are queued, not running
    expect(page.locator("#sweep-in-flight")).to_have_text("2 running · 4 queued (array limit)", timeout=60_000)
    # B25: each cell row is its own task: the four Slurm keeps PENDING say queued, not started, nothing taken
    queued = page.locator("tr[data-status=queued]")
    expect(queued).to_have_count(4, timeout=60_000)
    expect(page.locator("tr[data-status=running]")).to_have_count(2)
    array = svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")["array_job_id"]
    assert {queued.nth(i).locator(".cell-jobs a").inner_text() for i in range(4)} == pending_tasks(array)
    for i in range(4):
        expect(queued.nth(i).locator(".cell-status .badge")).to_have_text("queued")
        expect(queued.nth(i).locator(".cell-started")).to_have_text("—")
        expect(queued.nth(i).locator(".cell-took")).to_have_text("—")
    queued_cells = [queued.nth(i).get_attribute("data-cell") for i in range(4)]
    page.goto("/workflows")  # its Recent runs list the cells too: queued ones as queued
    for cell_id in queued_cells:
        expect(page.locator(f"tr[data-run='{cell_id}'] .run-status .badge")).to_have_text("queued")
    page.goto(f"/sweeps/{sweep_id}")
    running = launched
    expect(page.locator(".stacked-seg[data-label=running]")).to_have_attribute("data-value", "2")
    expect(page.locator(".stacked-seg[data-label=queued]")).to_have_attribute("data-value", "4")
    expect(page.locator(".stacked-seg[data-label=pending]")).to_have_attribute("data-value", "0")
    running_cells = [running.nth(i).get_attribute("data-cell") for i in range(6)]
    expect(page.locator(".array-job")).to_contain_text("as one Slurm job array")
    jobs = page.locator(f"tr[data-cell='{running_cells[0]}'] .cell-jobs a")  # a cell links to its array task
    expect(jobs).to_have_attribute("href", re.compile(rf"^/jobs/{array}_[0-5]\?cluster=local$"))
    page.wait_for_timeout(500)
    screenshot(page, "sweep")

    page.click("button:text-is('Cancel sweep')")
    page.click("dialog button:text-is('Cancel sweep')")
    expect(page.locator(".job-head .badge")).to_have_text("cancelled", timeout=60_000)
    # the cells' rows follow the sweep's own badge by a live event each: give a loaded machine time
    try:
        expect(page.locator("tr[data-status=cancelled]")).to_have_count(6, timeout=90_000)
    except AssertionError as exc:  # say what the other rows show, and what the server says of each cell
        rows = page.locator("tr[data-cell]")
        shown = {rows.nth(i).get_attribute("data-cell"): rows.nth(i).get_attribute("data-status") for i in range(6)}
        told = {cell: svc_server.api("GET", f"/api/workflows/runs/{cell}")["status"] for cell in shown}
        raise AssertionError(f"rows {shown}, server {told}") from exc
    expect(page.locator(".stacked-seg[data-label=cancelled]")).to_have_attribute("data-value", "6", timeout=90_000)
    expect(page.locator(".stacked-seg[data-label=running]")).to_have_attribute("data-value", "0", timeout=30_000)

    sweep = svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")
    assert (sweep["status"], sweep["cells_cancelled"], sweep["cells_completed"]) == ("cancelled", 6, 0)
    assert sweep["array_job_id"] is not None
    deadline = time.monotonic() + 90
    for cell_id in running_cells:
        while True:  # the cell is cancelled at once; its job's CANCELLED comes with the monitor's next tick
            cell = svc_server.api("GET", f"/api/workflows/runs/{cell_id}")
            if cell["job_statuses"]["work"] == "CANCELLED" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert (cell["status"], cell["job_statuses"]["work"]) == ("cancelled", "CANCELLED")

    page.click(f"a[href='/runs/{running_cells[0]}']")  # a cell links to its run
    page.wait_for_url(f"**/runs/{running_cells[0]}")
    expect(page.locator(".dag-node[data-name=work]")).to_have_attribute("data-state", "CANCELLED")

    page.goto("/sweeps")
    expect(page.locator(f"tr[data-sweep='{sweep_id}'] .badge")).to_have_text("cancelled")
    page.wait_for_timeout(500)
    screenshot(page, "sweeps")

    # ended cells took what their own task took (sacct's End - Start), not the time since the sweep started; a
    # cell whose task never started took nothing; nothing ticks any more
    def took_as_accounted() -> bool:
        page.goto(f"/sweeps/{sweep_id}")  # read again: the monitor stores each task's Start and End as it learns them
        page.wait_for_selector(".page[data-ready=true] tr[data-cell]")
        for cell_id in running_cells:
            row = page.locator(f"tr[data-cell='{cell_id}']")
            times = accounted(row.locator(".cell-jobs a").inner_text())
            expected = "—" if times is None else duration_text(times[1] - times[0])
            if row.locator(".cell-took").inner_text() != expected:
                return False
        return True

    eventually_blocking(took_as_accounted, timeout=120, what="each cell's Took as sacct's End - Start of its task")
    expect(page.locator(".cell-took [data-since]")).to_have_count(0)


def pending_tasks(array: str) -> set[str]:
    """The tasks of ``array`` squeue lists as PENDING now, one id each (``123_4``)."""
    out = subprocess.run(
        ["squeue", "-h", "-r", "-t", "PD", "-j", array, "-o", "%i"], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def accounted(task: str) -> tuple[int, int] | None:
    """Start and End (Unix seconds) sacct recorded for ``task``; None for one that never started."""
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-j", task, "-o", "Start,End"],
        env={**os.environ, "SLURM_TIME_FORMAT": "%s"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    start, _, end = out[0].partition("|") if out else ("", "", "")
    return (int(start), int(end)) if start.isdigit() and end.isdigit() else None


def duration_text(seconds: int) -> str:
    """Seconds as the dashboard writes a duration under an hour (``5s``, ``1m 03s``)."""
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m {rest:02d}s" if minutes else f"{rest}s"
