"""The run page shows every attempt of a retried job under it, live: its end, node, resources and why the next
attempt was made (dev cluster, Chromium)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from tests.web.conftest import ROOT, Server, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

OUTPUT = ROOT / "test-output"

FLOW = """\
name: retried
jobs:
  - {name: flaky, command: "test -e failed-once || { touch failed-once; exit 3; }", retry: 1, retry_delay: 0}
  - name: hog
    command: python3 -c "x = b'1' * (400 << 20)"
    depends_on: [flaky]
    resources: {memory_per_node: 50M, time_limit: "5"}
    escalate: {memory: {factor: 10, max: 1G}}
  - {name: report, command: "echo done", depends_on: [hog]}
"""


def shoot(page: Page, name: str) -> list[Path]:
    """``test-output/<name>-light.png`` and ``-dark.png`` at 1280 px, toggled as a person does."""
    OUTPUT.mkdir(exist_ok=True)
    paths = []
    for theme in ("light", "dark"):
        if page.evaluate("document.documentElement.dataset.theme") != theme:
            page.click("#theme-toggle")
        page.wait_for_timeout(200)
        path = OUTPUT / f"{name}-{theme}.png"
        page.screenshot(path=str(path))
        paths.append(path)
    return paths


def test_attempts_appear_under_each_retried_job_with_their_reasons(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": FLOW, "filename": "retried.yaml"})
    run = svc_server.api("POST", "/api/workflows/retried/run")
    open_page(page, f"/runs/{run['id']}")
    expect(page.locator(".job-head .badge")).to_have_text("completed", timeout=150_000)
    flaky = page.locator("tr[data-attempts-of=flaky] table.attempts tbody tr")
    expect(flaky).to_have_count(2)
    expect(flaky.nth(0).locator(".attempt-reason")).to_have_text("FAILED: retry 1 of 1")
    expect(flaky.nth(0).locator("td").nth(3)).to_have_text("3")
    hog = page.locator("tr[data-attempts-of=hog] table.attempts tbody tr")
    expect(hog).to_have_count(2)
    expect(hog.nth(0).locator(".attempt-reason")).to_have_text("OUT_OF_MEMORY: memory 50M -> 500M (x10, cap 1G)")
    expect(hog.nth(0).locator(".badge")).to_have_text("OUT_OF_MEMORY")
    expect(hog.nth(1).locator("td").nth(5)).to_have_text("500M")
    expect(page.locator("tr[data-job=hog] .attempt-count")).to_have_text("2 attempts")
    expect(page.locator("tr[data-attempts-of=report]")).to_have_count(0)  # one attempt, nothing to explain
    done = svc_server.api("GET", f"/api/workflows/runs/{run['id']}")
    first_hog = next(a for a in done["attempts"] if a["job"] == "hog")
    expect(hog.nth(0).locator("a")).to_have_attribute("href", f"/jobs/{first_hog['job_id']}?cluster=local")
    hog.nth(1).scroll_into_view_if_needed()  # the jobs card with both jobs' attempts in the 1280x800 view
    page.wait_for_timeout(300)
    shoot(page, "run-attempts")
    # once accounting has the ended jobs' usage: each job's current attempt, measured, under the jobs card
    efficiency = page.locator("#run-efficiency")
    expect(efficiency.locator("#efficiency-table tbody tr")).to_have_count(3, timeout=90_000)
    expect(efficiency.locator(".eff-summary")).to_contain_text("Over the run: CPU")
    hog_link = page.locator(f"a:text-is('{done['job_ids']['hog']}')")
    hog_row = efficiency.locator("#efficiency-table tbody tr", has=hog_link)
    expect(hog_row.locator("td").nth(4)).to_have_text(re.compile(r"^\d+(\.\d)?%$"))  # peak of the 500M it asked
    expect(efficiency.locator(".eff-unmeasured")).to_have_count(0)
    efficiency.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    shoot(page, "run-efficiency")
