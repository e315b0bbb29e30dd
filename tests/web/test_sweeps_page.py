"""Sweeps in the browser: six uniform cells started from the workflow page as one job array (two tasks running at a
time), the counters moving live, and a cancel that ends every cell (and its task) CANCELLED."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

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
    sweep_id = int(page.url.rsplit("/", 1)[1])

    running = page.locator("tr[data-status=running]")
    expect(running).to_have_count(6, timeout=60_000)  # all submitted at once; Slurm runs two tasks at a time
    # ...and holds four (JobArrayTaskLimit): they are queued, not running
    expect(page.locator("#sweep-in-flight")).to_have_text("2 running · 4 queued (array limit)", timeout=60_000)
    expect(page.locator(".stacked-seg[data-label=running]")).to_have_attribute("data-value", "2")
    expect(page.locator(".stacked-seg[data-label=queued]")).to_have_attribute("data-value", "4")
    expect(page.locator(".stacked-seg[data-label=pending]")).to_have_attribute("data-value", "0")
    running_cells = [running.nth(i).get_attribute("data-cell") for i in range(6)]
    expect(page.locator(".array-job")).to_contain_text("as one Slurm job array")
    array = svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")["array_job_id"]
    jobs = page.locator(f"tr[data-cell='{running_cells[0]}'] .cell-jobs a")  # a cell links to its array task
    expect(jobs).to_have_attribute("href", re.compile(rf"^/jobs/{array}_[0-5]\?cluster=local$"))
    page.wait_for_timeout(500)
    screenshot(page, "sweep")

    page.click("button:text-is('Cancel sweep')")
    page.click("dialog button:text-is('Cancel sweep')")
    expect(page.locator(".job-head .badge")).to_have_text("cancelled", timeout=60_000)
    # the cells' rows follow the sweep's own badge by a live event each: give a loaded machine time
    expect(page.locator("tr[data-status=cancelled]")).to_have_count(6, timeout=30_000)
    expect(page.locator(".stacked-seg[data-label=cancelled]")).to_have_attribute("data-value", "6", timeout=30_000)
    expect(page.locator(".stacked-seg[data-label=running]")).to_have_attribute("data-value", "0", timeout=30_000)

    sweep = svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")
    assert (sweep["status"], sweep["cells_cancelled"], sweep["cells_completed"]) == ("cancelled", 6, 0)
    assert sweep["array_job_id"] is not None
    deadline = time.monotonic() + 30
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
