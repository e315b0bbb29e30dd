"""One word per thing on a run's page (B22): a job the run skipped (its dependency failed, so Slurm was told to
cancel it while it waited) says the same word on the graph, in the jobs table and in the efficiency card; and a
failed job's efficiency says something useful, not "nothing to change"."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.web.conftest import Server

FLOW = """name: skip-words
jobs:
  - name: boom
    command: "sleep 3; exit 3"
  - name: after
    command: "echo never"
    depends_on: [boom]
"""


def ended_run(server: Server) -> dict[str, Any]:
    server.api("POST", "/api/workflows/upload", json={"yaml": FLOW, "filename": "skip-words.yaml"})
    run: dict[str, Any] = server.api("POST", "/api/workflows/skip-words/run")
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run = server.api("GET", f"/api/workflows/runs/{run['id']}")
        if run["status"] in ("completed", "failed", "cancelled"):
            return run
        time.sleep(1)
    raise AssertionError(f"run {run['id']} did not end: {run}")


def test_a_skipped_job_is_skipped_everywhere_and_a_failed_job_gets_no_advice(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    run = ended_run(svc_server)
    assert run["job_statuses"] == {"boom": "FAILED", "after": "SKIPPED"}, run
    skipped = str(run["job_ids"]["after"])  # submitted with its dependency, then cancelled unrun
    eventually_blocking(  # Slurm's word for it, once the monitor's next tick has seen svc's scancel
        lambda: svc_server.api("GET", f"/api/jobs/{skipped}")["status"],
        until=lambda status: status == "CANCELLED",
        timeout=90,
        what=f"job {skipped} (cancelled unrun) to read CANCELLED",
    )
    open_page(page, f"/runs/{run['id']}")
    expect(page.locator(".dag-node[data-name=after]")).to_have_attribute("data-state", "SKIPPED")
    expect(page.locator("tr[data-job=after] td").nth(2)).to_have_text("SKIPPED")
    rows = page.locator("#run-efficiency #efficiency-table tbody tr")
    after = rows.filter(has=page.get_by_role("link", name=skipped, exact=True))
    expect(after.locator("td").nth(2)).to_have_text("SKIPPED", timeout=90_000)  # once accounting has the jobs
    failed = rows.filter(has=page.get_by_role("link", name=str(run["job_ids"]["boom"]), exact=True))
    expect(failed.locator("td").nth(2)).to_have_text("FAILED")
    expect(failed.locator("td.suggestions")).to_have_text("—")  # no advice from a job that did not complete
    expect(failed.locator("td.suggestions span")).to_have_attribute("title", "no advice: the job did not complete")
