"""Workflows in the browser: the sample diamond saved, dry-run and run with every DAG node turning COMPLETED
live (no reload); the visual builder writing YAML the server accepts; an invalid YAML's error shown at its line."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server


def open_sample(page: Page, name: str) -> None:
    """The editor for a new workflow, preloaded with the sample, renamed to ``name``."""
    from playwright.sync_api import expect

    page.goto("/workflows/new")
    expect(page.locator(".validity")).to_have_text("✓ valid")
    text = page.input_value(".code-input").replace("name: diamond", f"name: {name}")
    page.fill(".code-input", text)
    expect(page.locator(".validity")).to_have_text("✓ valid")


def test_the_diamond_runs_and_every_node_turns_completed_live(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    page.goto("/workflows")
    if not svc_server.api("GET", "/api/workflows"):  # the first test on this server: the empty list offers the sample
        expect(page.locator(".empty-title").first).to_have_text("No workflows yet")
        expect(page.locator("a:text-is('Start from the sample')")).to_have_attribute("href", "/workflows/new")
    open_sample(page, "diamond-e2e")
    expect(page.locator(".dag-node")).to_have_count(4)
    page.click("button:text-is('Save')")
    page.wait_for_url("**/workflows/diamond-e2e")
    expect(page.locator(".flow-head .badge")).to_be_hidden()  # saved: no "unsaved" badge

    page.click("[role=radio]:text-is('From / to')")
    page.select_option("select[aria-label='from job']", "left")
    page.click("button:text-is('Dry run')")
    rows = page.locator(".dry-run-result tbody tr")
    expect(rows).to_have_count(3)  # the run order is prepare, left, right, join: from left cuts prepare
    expect(rows.nth(0)).to_contain_text("left")
    expect(rows.nth(2)).to_contain_text("join")
    expect(rows.nth(2)).to_contain_text("left, right")
    expect(page.locator(".dag-node[data-state=SKIPPED]")).to_have_count(1)
    screenshot(page, "workflow-editor")

    page.click("[role=radio]:text-is('Every job')")
    page.evaluate("window.svcNoReload = true")  # gone if anything reloaded the page
    page.click("button:text-is('Run on local')")
    page.wait_for_url("**/runs/*")
    expect(page.locator(".dag-node")).to_have_count(4)
    expect(page.locator(".dag-node[data-state=COMPLETED]")).to_have_count(4, timeout=120_000)
    expect(page.locator(".job-head .badge")).to_have_text("completed", timeout=30_000)
    assert page.evaluate("window.svcNoReload") is True
    run_id = page.url.split("?")[0].rsplit("/", 1)[1]  # the page names its cluster: /runs/ID?cluster=local
    run = svc_server.api("GET", f"/api/workflows/runs/{run_id}")
    assert set(run["job_statuses"].values()) == {"COMPLETED"}
    first_job = page.locator("table.data a[href^='/jobs/']").first
    expect(first_job).to_have_attribute("href", f"/jobs/{run['job_ids']['prepare']}?cluster=local")
    page.wait_for_timeout(500)
    screenshot(page, "run")
    page.goto("/workflows")
    expect(page.locator(f"tr[data-run='{run_id}'] .badge")).to_have_text("completed")
    screenshot(page, "workflows")


def test_the_builder_writes_yaml_the_server_accepts(page: Page, screenshot: Callable[[Page, str], None]) -> None:
    from playwright.sync_api import expect

    open_sample(page, "built")
    page.click(".dag-node[data-name=join]")
    page.click("button:text-is('+ Add job')")  # a new job, independent (test_workflow_builder.py)
    expect(page.locator(".dag-node")).to_have_count(5)
    expect(page.locator(".validity")).to_have_text("✓ valid")
    page.fill(".job-editor input >> nth=0", "report")  # rename, give it a GPU, make it run after join, apply
    page.locator(".deps .dep-choice", has_text="join").locator("input").check()
    page.locator(".job-editor .field", has_text="GPUs per node").locator("input").fill("1")
    page.click("button:text-is('Apply to YAML')")
    expect(page.locator(".code-input")).to_have_value(
        re.compile(
            re.escape(
                "  - name: report\n    command: echo hello\n    depends_on: [join]\n"
                "    resources:\n      gpus_per_node: 1\n"
            )
        )
    )
    expect(page.locator(".validity")).to_have_text("✓ valid")
    page.click(".dag-edge[data-from=join][data-to=report]", force=True)  # an arrow click removes the dependency
    expect(page.locator(".dag-edge[data-to=report]")).to_have_count(0)
    expect(page.locator(".code-input")).not_to_have_value(re.compile(re.escape("depends_on: [join]")))
    page.click(".dag-node[data-name=right]")
    expect(page.locator(".job-editor h3")).to_have_text("Job right")
    screenshot(page, "workflow-builder")


def test_invalid_yaml_shows_the_api_error_at_its_line(page: Page) -> None:
    from playwright.sync_api import expect

    open_sample(page, "broken")
    text = page.input_value(".code-input").replace("depends_on: [left, right]", "depends_on: [left, nowhere]")
    page.fill(".code-input", text)
    error = "line 15: jobs[3].depends_on[1]: job 'join' depends on unknown job 'nowhere'"
    expect(page.locator(".error-list li")).to_have_text([error])
    expect(page.locator(".validity")).to_have_text("1 problem")
    marked = page.locator(".code-gutter .has-error")
    expect(marked).to_have_text("15")
    expect(marked).to_have_attribute("title", error)
    expect(page.locator("button:text-is('Run on local')")).to_be_disabled()
    page.fill(".code-input", "name: [unclosed\n")
    expect(page.locator(".error-list li")).to_contain_text("line 2")


def test_eight_tabs_share_one_event_stream_and_all_see_a_run_finish(page: Page, svc_server: Server) -> None:
    """Browsers open at most six connections to a server over HTTP/1.1: a stream per tab would leave the seventh
    tab loading forever. The tabs share one stream, and every one of them sees the run end without a reload."""
    from playwright.sync_api import expect

    yaml = 'name: tabs-e2e\njobs:\n  - name: only\n    command: "sleep 2"\n'
    svc_server.api("POST", "/api/workflows/upload", json={"yaml": yaml, "filename": "tabs-e2e.yaml"})
    tabs = [page]
    page.goto("/workflows")
    for _ in range(7):
        tab = page.context.new_page()
        tab.goto("/workflows")
        tabs.append(tab)
    for tab in tabs:
        expect(tab.locator("html")).to_have_attribute("data-live", "on")
    run = svc_server.api("POST", "/api/workflows/tabs-e2e/run")
    for tab in tabs:
        expect(tab.locator(f"tr[data-run='{run['id']}'] .badge")).to_have_text("completed", timeout=60_000)
    for tab in tabs[1:]:
        tab.close()
