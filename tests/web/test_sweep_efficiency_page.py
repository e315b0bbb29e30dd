"""An ended sweep's page shows how its cells' jobs used what they asked for, as an ended run's page does: the
figures over the sweep and one measured row per cell's job, once accounting has them (dev cluster, Chromium)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

WORKFLOW = """name: measured-sweep
args:
  mb: 10
jobs:
  - name: fill
    command: python3 -c "x = b'1' * ({{ mb }} << 20); import time; time.sleep(2)"
    resources: {memory_per_node: 200M, time_limit: "5"}
"""


def test_an_ended_sweep_shows_its_cells_efficiency(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": WORKFLOW, "filename": "measured-sweep.yaml"})
    sweep = svc_server.api(
        "POST", "/api/workflows/measured-sweep/run", json={"sweep": {"matrix": {"mb": [10, 120]}, "max_parallel": 2}}
    )
    open_page(page, f"/sweeps/{sweep['id']}")
    expect(page.locator(".job-head .badge")).to_have_text("completed", timeout=150_000)
    efficiency = page.locator("#sweep-efficiency")
    rows = efficiency.locator("#efficiency-table tbody tr")
    expect(rows).to_have_count(2, timeout=90_000)  # accounting has both jobs' usage a little after they ended
    expect(efficiency.locator(".eff-summary")).to_contain_text("Over the sweep: CPU")
    expect(efficiency.locator(".eff-unmeasured")).to_have_count(0)
    measured = svc_server.api("GET", f"/api/history/efficiency/sweeps/{sweep['id']}")
    cells = {cell["id"]: cell["args"] for cell in svc_server.api("GET", f"/api/sweep_runs/{sweep['id']}/cells")}
    for job in measured["jobs"]:
        row = efficiency.locator("#efficiency-table tbody tr", has=page.locator(f"a:text-is('{job['job_id']}')"))
        expect(row.locator("td").nth(1)).to_have_text(f"fill · mb={cells[job['run_id']]['mb']}")  # which cell
        expect(row.locator("td").nth(4)).to_have_text(re.compile(r"^\d+(\.\d)?%$"))  # peak of the 200M it asked
    efficiency.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    screenshot(page, "sweep-efficiency")
