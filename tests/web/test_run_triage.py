"""Triage in one click: a run whose job failed on the dev cluster links that job, opened on its stderr, from the
failure banner, from its node in the graph and from its row; the run page shows the last 20 lines of its stderr,
read through ``GET /api/jobs/{id}/logs?tail_lines=20``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

FAILING = """name: triage-e2e
jobs:
  - name: prep
    command: "echo prepared"
  - name: boom
    command: "echo working; for i in $(seq 1 30); do echo err line $i >&2; done; exit 3"
    depends_on: [prep]
"""


def failed_run(svc_server: Server) -> tuple[str, str]:
    """A run of FAILING that ended failed: its id and the failed job's scheduler id."""
    import time

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": FAILING, "filename": "triage-e2e.yaml"})
    run = svc_server.api("POST", "/api/workflows/triage-e2e/run")
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run = svc_server.api("GET", f"/api/workflows/runs/{run['id']}")
        if run["status"] in ("completed", "failed", "cancelled"):
            break
        time.sleep(1)
    assert run["status"] == "failed", run
    return run["id"], str(run["job_ids"]["boom"])


def test_a_failed_job_is_one_click_from_its_stderr(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    run_id, job_id = failed_run(svc_server)
    open_page(page, f"/runs/{run_id}")
    tail = page.locator("#failed-stderr .failed-tail[data-job=boom] pre")
    expected = "\n".join(f"err line {i}" for i in range(11, 31))
    expect(tail).to_have_text(expected + "\n")  # the last 20 lines, inline
    expect(page.locator("#failed-stderr .failed-tail")).to_have_count(1)  # prep completed: not listed
    banner = page.locator(".alert-error a.alert-link")
    expect(banner).to_have_attribute("href", f"/jobs/{job_id}?cluster=local&log=stderr")  # the run's cluster
    page.wait_for_timeout(300)
    screenshot(page, "run-failed")

    banner.click()
    expect(page).to_have_url(re.compile(rf"/jobs/{job_id}\?cluster=local&log=stderr$"))
    expect(page.locator("[aria-label='Log stream'] button[aria-pressed=true]")).to_have_text("stderr")
    expect(page.locator("#job-log")).to_contain_text("err line 30")

    open_page(page, f"/runs/{run_id}")
    page.click(".dag-node[data-name=boom]")  # the failed node opens the job on stderr
    expect(page).to_have_url(re.compile(rf"/jobs/{job_id}\?cluster=local&log=stderr$"))
    expect(page.locator("#job-log")).to_contain_text("err line 30")

    open_page(page, f"/runs/{run_id}")
    page.click(".dag-node[data-name=prep]")  # a completed node still selects its row
    expect(page.locator("tr.is-selected[data-job=prep]")).to_have_count(1)
    expect(page).to_have_url(re.compile(rf"/runs/{run_id}(\?cluster=local)?$"))

    logs = svc_server.api("GET", f"/api/jobs/{job_id}/logs", params={"tail_lines": 2})
    assert logs["stderr"] == "err line 29\nerr line 30\n"
    assert logs["stdout"] == "working\n"
    with pytest.raises(httpx.HTTPStatusError) as both:
        svc_server.api("GET", f"/api/jobs/{job_id}/logs", params={"tail_lines": 2, "stderr_offset": 5})
    assert both.value.response.status_code == 400
    assert both.value.response.json() == {"detail": "give tail_lines or offsets, not both"}
    with pytest.raises(httpx.HTTPStatusError) as zero:
        svc_server.api("GET", f"/api/jobs/{job_id}/logs", params={"tail_lines": 0})
    assert zero.value.response.status_code == 422
