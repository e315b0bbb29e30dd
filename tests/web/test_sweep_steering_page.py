"""Steering a sweep in the browser: started from the workflow page with a failure budget, paused from its page
(the paused badge with the held count, the budget "1 of 2 failures", Resume instead of Pause, the list's badge),
resumed, then cancelled while paused."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

WORKFLOW = """name: steer-e2e
args:
  x: 1
jobs:
  - name: first
    command: "test {{ x }} != 1 && sleep 60"
  - name: then
    command: "echo cell {{ x }}"
    depends_on: [first]
"""


def test_pause_resume_and_the_failure_budget_on_the_sweep_page(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": WORKFLOW, "filename": "steer-e2e.yaml"})
    page.goto("/workflows/steer-e2e")
    expect(page.locator(".validity")).to_have_text("✓ valid")
    page.fill("input[aria-label='axis 1 argument']", "x")
    page.fill("input[aria-label='axis 1 values']", "1, 2, 3, 4")
    page.locator(".field", has_text="Max parallel cells").locator("input").fill("1")
    page.locator(".field", has_text="Max failures").locator("input").fill("2")
    page.click("button:text-is('Start sweep on local')")
    page.wait_for_url("**/sweeps/*")
    sweep_id = int(page.url.split("?")[0].rsplit("/", 1)[1])  # the page names its cluster: /sweeps/ID?cluster=...

    # cell 1 fails at once, cell 2 runs its 60 s first job with its second job queued behind it
    expect(page.locator("tr[data-status=failed]")).to_have_count(1, timeout=60_000)
    expect(page.locator("tr[data-status=running], tr[data-status=queued]")).to_have_count(1, timeout=60_000)
    expect(page.locator(".failure-budget")).to_have_text("1 of 2 failures · the sweep stops at failure 3")
    expect(page.locator("button:text-is('Resume')")).to_be_hidden()

    page.click("button:text-is('Pause')")
    expect(page.locator(".job-head .status-paused")).to_have_text("paused · 1 held")
    expect(page.locator(".held-count")).to_have_text(" · paused, 1 held")
    expect(page.locator(".paused-facts")).to_contain_text("1 launched cell held in the queue")
    expect(page.locator("button:text-is('Pause')")).to_be_hidden()
    expect(page.locator("button:text-is('Resume')")).to_be_visible()
    sweep = svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")
    assert (sweep["status"], sweep["cells_held"], sweep["cells_pending"], sweep["max_failures"]) == ("running", 1, 2, 2)
    assert sweep["paused_at"] is not None
    page.wait_for_timeout(500)
    screenshot(page, "sweep-paused")

    page.goto("/sweeps")
    expect(page.locator(f"tr[data-sweep='{sweep_id}'] .status-paused")).to_have_text("paused · 1 held")
    page.goto(f"/sweeps/{sweep_id}")
    page.click("button:text-is('Resume')")
    expect(page.locator(".job-head .status-paused")).to_have_count(0)
    expect(page.locator("button:text-is('Pause')")).to_be_visible()
    assert svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")["paused_at"] is None

    page.click("button:text-is('Pause')")  # paused again, then cancelled: every cell ends
    expect(page.locator(".job-head .status-paused")).to_be_visible()
    page.click("button:text-is('Cancel sweep')")
    page.click("dialog button:text-is('Cancel sweep')")
    expect(page.locator(".job-head .badge").first).to_have_text("cancelled", timeout=60_000)
    expect(page.locator(".job-head .status-paused")).to_have_count(0)
    expect(page.locator("button:text-is('Resume')")).to_be_hidden()
    ended = svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")
    assert (ended["status"], ended["cells_failed"], ended["cells_cancelled"], ended["paused_at"]) == (
        "cancelled",
        1,
        3,
        None,
    )


ONE_CELL = """name: steer-late-answer
args:
  x: 1
jobs:
  - name: nap
    command: "sleep 120"
"""


def test_a_cancel_answer_that_arrives_after_the_events_does_not_take_the_page_back(
    page: Page, svc_server: Server
) -> None:
    """The 202 of a cancel says ``draining``; the sweep is ``cancelled`` before that answer reaches the page when
    its cells end at once. The page once drew the late 202 over the newer state and stayed on "draining" (seen in
    CI on a busy machine); here the answer is held back so that it always arrives last."""
    from playwright.sync_api import Route, expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": ONE_CELL, "filename": "steer-late-answer.yaml"})
    sweep = svc_server.api(
        "POST", "/api/workflows/steer-late-answer/run", json={"sweep": {"matrix": {"x": [1, 2]}, "max_parallel": 2}}
    )
    sweep_id = sweep["id"]
    page.goto(f"/sweeps/{sweep_id}")
    launched = page.locator("tr[data-status=running], tr[data-status=queued]")  # queued: Slurm keeps its task PENDING
    expect(launched).to_have_count(2, timeout=60_000)

    answers: list[int] = []

    def answer_late(route: Route) -> None:
        response = route.fetch()  # the server has cancelled every cell and emitted its events by now
        assert svc_server.api("GET", f"/api/sweep_runs/{sweep_id}")["status"] == "cancelled"
        # the events reach the page before its own answer does: it shows the newer state first
        expect(page.locator(".job-head .badge").first).to_have_text("cancelled", timeout=60_000)
        answers.append(response.status)
        route.fulfill(response=response)

    page.route(f"**/api/sweep_runs/{sweep_id}/cancel", answer_late)
    expect(page.locator(".job-head .badge").first).to_have_text("running")
    page.click("button:text-is('Cancel sweep')")
    page.click("dialog button:text-is('Cancel sweep')")
    expect(page.locator(".toast", has_text="Sweep cancelling")).to_be_visible(timeout=60_000)
    assert answers == [202]
    expect(page.locator(".job-head .badge").first).to_have_text("cancelled")
    expect(page.locator("tr[data-status=cancelled]")).to_have_count(2)
