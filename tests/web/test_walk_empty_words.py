"""From the walk of the dashboard with two clusters (issue 28, item 7): what a page says when there is nothing to
show must be true.

- Files, with the SSH profile lab24 (no mount yet) and ``local`` as the server default, said "No SSH profile yet"
  and offered to create one: it says no profile is the server default and names the one that could be.
- The log of a job that ended with nothing on stdout said "(stdout is empty so far)", as if more could come.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture
def lab24_profile(svc_server: Server) -> Iterator[None]:
    add_dev_profile(svc_server, env24(), "lab24")
    try:
        yield
    finally:
        svc_server.client.delete("/api/config/ssh/profiles/lab24")


def test_files_with_a_profile_that_is_not_the_server_default(
    page: Page, svc_server: Server, lab24_profile: None
) -> None:
    from playwright.sync_api import expect

    assert svc_server.api("GET", "/api/config/ssh/profiles")["current"] == ""  # the server default is local
    open_page(page, "/files")
    empty = page.locator(".page .empty")
    expect(empty).not_to_contain_text("No SSH profile")
    expect(empty.locator(".empty-title")).to_have_text("No mounts to browse")
    expect(empty).to_contain_text("local is not one")  # Files shows the tab's cluster: the server default, local
    expect(empty).to_contain_text("Choose lab24 above")
    expect(empty.get_by_role("link", name="SSH profiles & mounts")).to_have_attribute("href", "/settings?tab=profiles")


def test_an_ended_jobs_empty_log_is_empty_not_empty_so_far(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    job_id = svc_server.api(
        "POST", "/api/jobs", json={"name": "silent-fail", "script_content": "#!/bin/bash\n#SBATCH --time=5\nexit 4\n"}
    )["job_id"]
    eventually_blocking(
        lambda: svc_server.api("GET", f"/api/jobs/{job_id}")["status"],
        until=lambda status: status == "FAILED",
        timeout=90,
        what="the silent job to fail",
    )
    open_page(page, f"/jobs/{job_id}?cluster=local")
    expect(page.locator(".log-status")).to_contain_text("job ended")
    expect(page.locator("#job-log")).to_have_text("(stdout is empty)")
