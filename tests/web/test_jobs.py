"""Jobs in the browser: submit from the form and watch it live, a failing job's exit code and log, API errors."""

from __future__ import annotations

import getpass
import re
from typing import TYPE_CHECKING

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

STATE_WATCH = """() => {
  window.__seenStates = [];
  window.__notReloaded = true;
  const record = () => {
    const text = document.querySelector('#job-state')?.textContent;
    if (text && window.__seenStates[window.__seenStates.length - 1] !== text) window.__seenStates.push(text);
  };
  record();
  new MutationObserver(record).observe(document.querySelector('main'),
    {subtree: true, childList: true, characterData: true});
}"""


def submit_from_form(page: Page, name: str, command: str, *, time_limit: str = "") -> str:
    open_page(page, "/submit")
    page.fill("input[name=name]", name)
    page.fill("input[name=time_limit]", time_limit)
    page.select_option("select[name=partition]", "debug")
    page.fill("textarea[name=command]", command)
    page.wait_for_function("document.querySelector('#script-preview')?.textContent.includes('#SBATCH')")
    assert command in page.inner_text("#script-preview")  # the preview is the script that will be submitted
    page.click("#submit-job")
    page.wait_for_url(re.compile(r"/jobs/\d+\?cluster=local$"))  # the job's link names its cluster
    page.wait_for_selector(".page[data-ready=true] #job-state")
    return page.url.rsplit("/", 1)[1].split("?")[0]


def test_a_job_submitted_from_the_form_goes_live_to_completed_and_shows_its_log(
    page: Page, screenshot: Callable[[Page, str], None]
) -> None:
    job_id = submit_from_form(page, "web-hello", "echo hello-from-the-dashboard; sleep 6")
    page.evaluate(STATE_WATCH)
    page.wait_for_function("document.querySelector('#job-state')?.textContent === 'RUNNING'", timeout=60_000)
    screenshot(page, "job-running")
    before = page.inner_text("#job-elapsed")
    page.wait_for_function(f"document.querySelector('#job-elapsed')?.textContent !== {before!r}")  # time moves
    page.wait_for_function("document.querySelector('#job-state')?.textContent === 'COMPLETED'", timeout=60_000)
    assert page.evaluate("window.__notReloaded")  # the same document saw every state: no reload
    seen = page.evaluate("window.__seenStates")
    assert seen[-2:] == ["RUNNING", "COMPLETED"] or seen[-3:] == ["PENDING", "RUNNING", "COMPLETED"], seen
    page.wait_for_function("document.querySelector('#job-log')?.textContent.includes('hello-from-the-dashboard')")
    timeline = page.inner_text(".timeline")
    assert "RUNNING" in timeline
    assert "COMPLETED" in timeline
    assert page.inner_text("#job-exit") == "exit code 0"
    open_page(page, "/jobs")
    row = page.locator(f"tr[data-job-id='{job_id}']")
    assert "COMPLETED" in row.inner_text()


def test_a_job_that_exits_3_shows_failed_exit_code_3_and_one_click_to_its_stderr(page: Page) -> None:
    job_id = submit_from_form(page, "web-fails", "echo about-to-fail >&2; exit 3")
    page.wait_for_function("document.querySelector('#job-state')?.textContent === 'FAILED'", timeout=60_000)
    assert page.inner_text("#job-exit") == "exit code 3"
    open_page(page, "/jobs")
    page.keyboard.press("/")  # the search box, by keyboard
    page.keyboard.type("web-fails")
    page.get_by_role("button", name="Failed").click()
    # the filter is in the URL; the tab follows the default (a job page it opened did not choose a cluster for it)
    page.wait_for_url(re.compile(r"/jobs\?q=web-fails&status=FAILED$"))
    row = page.locator(f"tr[data-job-id='{job_id}']")
    assert "FAILED" in row.inner_text()
    assert "exit 3" in row.inner_text()
    row.get_by_role("link", name="Log").click()  # one click from the failed job to its log
    page.wait_for_url(re.compile(rf"/jobs/{job_id}\?cluster=local&log=stderr$"))
    page.wait_for_function("document.querySelector('#job-log')?.textContent.includes('about-to-fail')")


def test_an_invalid_field_shows_the_api_detail_next_to_the_form(page: Page) -> None:
    open_page(page, "/submit")
    page.fill("textarea[name=command]", "true")
    page.fill("input[name=time_limit]", "two hours")
    page.click("#submit-job")
    # the API's own check, in words, under the field it is about
    error = page.locator(".submit-form .field:has(input[name=time_limit]) .field-error")
    error.wait_for()
    assert "4:00:00" in error.inner_text()
    assert page.url.endswith("/submit")  # nothing was submitted


def test_cancel_asks_first_then_the_job_ends_cancelled(page: Page) -> None:
    submit_from_form(page, "web-cancel-me", "sleep 300", time_limit="0:10:00")
    page.wait_for_function("document.querySelector('#job-state')?.textContent === 'RUNNING'", timeout=60_000)
    page.get_by_role("button", name="Cancel job").click()
    dialog = page.locator("dialog.dialog")
    assert "cannot be undone" in dialog.inner_text()
    dialog.get_by_role("button", name="Cancel", exact=True).click()  # changed my mind: nothing happens
    assert page.inner_text("#job-state") == "RUNNING"
    page.get_by_role("button", name="Cancel job").click()
    page.locator("dialog.dialog").get_by_role("button", name="Cancel job").click()
    page.wait_for_function("document.querySelector('#job-state')?.textContent === 'CANCELLED'", timeout=60_000)
    assert page.get_by_role("button", name="Cancel job").count() == 0
    # who cancelled it, by name (sacct says "CANCELLED by <uid>"), and no "exit code 0" for a job that never exited
    page.wait_for_function(
        f"document.querySelector('#job-cancelled-by')?.textContent === 'cancelled by {getpass.getuser()}'",
        timeout=60_000,
    )
    assert page.locator("#job-exit").count() == 0
    assert page.inner_text("#job-time-limit") == "00:10:00"  # as Slurm reports it (the form said 0:10:00)
    assert page.inner_text("#job-node-list") != "—"
