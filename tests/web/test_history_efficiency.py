"""The history page's efficiency: a job that asked for 4 CPUs, 2G and 10 minutes to run a 6 s one-core python
holding 100 MB shows up flagged, with its suggestions, next to the range's aggregate CPU, memory and time."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from playwright.sync_api import Page

    from tests.web.conftest import Server

PROBE = """\
import time
block = bytearray(100 * 1024 * 1024)
for i in range(0, len(block), 4096):
    block[i] = 1
end = time.time() + 6
while time.time() < end:
    pass
"""


def test_a_flagged_job_and_its_suggestions_on_the_history_page(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None], tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    probe.parent.chmod(0o755)
    script = f"#!/bin/bash\n#SBATCH --mem=2G\n#SBATCH --cpus-per-task=4\n#SBATCH --time=10\npython3 {probe}\n"
    job_id = str(svc_server.api("POST", "/api/jobs", json={"name": "overask-web", "script_content": script})["job_id"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the server's monitor reads the usage in the tick that sees the end
        view = svc_server.api("GET", f"/api/history/efficiency/jobs/{job_id}")
        if view["efficiency"] is not None:
            break
        svc_server.api("GET", f"/api/jobs/{job_id}")
        time.sleep(1)
    else:
        raise AssertionError(f"job {job_id} was never measured: {view}")

    open_page(page, "/history")
    row = page.locator("#efficiency-table tr", has=page.locator(f"a:text-is('{job_id}')"))
    expect(row).to_have_class("flagged")
    expect(row.locator("td.eff-low")).to_have_count(3)  # CPU, memory and time all under 80%
    expect(row.locator("td.suggestions li")).to_have_count(3)
    expect(row.locator("td.suggestions")).to_contain_text("asked 4 CPUs, used")
    expect(row.locator("td.suggestions")).to_contain_text("asked 2G, peaked at")
    expect(row.locator("td.suggestions")).to_contain_text("asked 10m, ran")
    flagged = page.locator("#efficiency-stats .stat", has_text="Flagged jobs")
    expect(flagged).not_to_contain_text("Flagged jobs0")
    expect(page.locator("#efficiency-stats .stat", has_text="Memory efficiency")).to_contain_text("%")
    row.scroll_into_view_if_needed()
    screenshot(page, "history-efficiency")
