"""A task of a job array in the browser: the jobs table links to it, its page shows its state and its own log,
and it is cancelled from there while the array's other task is left alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.web.conftest import Server, open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

ARRAY_SCRIPT = (
    "#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --array=0-1\n"
    'echo "hello from task $SLURM_ARRAY_TASK_ID"\nsleep 300\n'
)


def test_an_array_task_opens_from_the_jobs_table_shows_its_log_and_cancels(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    body = {"script_content": ARRAY_SCRIPT, "job_name": "web-array"}
    array = svc_server.api("POST", "/api/jobs", json=body)["job_id"]
    task, other = f"{array}_1", f"{array}_0"
    try:
        open_page(page, "/jobs")
        link = page.locator(f"a[href^='/jobs/{task}?'], a[href='/jobs/{task}']").first
        expect(link).to_be_visible(timeout=30_000)  # the queue lists every task on its own row
        link.click()
        page.wait_for_url(f"**/jobs/{task}?cluster=local")
        page.wait_for_selector(".page[data-ready=true] #job-state")
        expect(page.locator("#page-title")).to_have_text(f"Job {task} on local")
        expect(page.locator("#job-state")).to_have_text("RUNNING", timeout=60_000)
        expect(page.locator("#job-log")).to_contain_text("hello from task 1", timeout=30_000)
        screenshot(page, "array-task")

        page.get_by_role("button", name="Cancel job").click()
        page.locator("dialog.dialog").get_by_role("button", name="Cancel job").click()
        expect(page.locator("#job-state")).to_have_text("CANCELLED", timeout=60_000)
        assert svc_server.api("GET", f"/api/jobs/{other}")["status"] == "RUNNING"  # only this task was cancelled
    finally:
        svc_server.client.delete(f"/api/jobs/{array}_[0-1]")


def test_a_malformed_job_id_is_said_so(page: Page) -> None:
    open_page(page, "/jobs/12_x")
    assert "<id>_<index> for a task of a job array" in page.inner_text(".empty")
