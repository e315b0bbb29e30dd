"""Two clusters in the browser: this machine's Slurm (``local``) and the dev cluster again through an SSH profile to
the loopback sshd. A job is (cluster, id): each link opens its own cluster's job, two tabs show two clusters, and
the Jobs page keeps equal ids of two clusters apart (the second cluster's row is written into the server's store,
since one Slurm never hands out one id twice)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlmodel import Session

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from tests.web.conftest import add_dev_profile, open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

FLOW = "name: hello-{name}\njobs:\n  - name: greet\n    command: echo hello from {name}\n"


@pytest.fixture
def profile(svc_server: Server, dev_env: dict[str, str]) -> Iterator[str]:
    """An SSH profile to the dev cluster (not the server's default); deleted after."""
    name = f"lab{uuid.uuid4().hex[:4]}"
    add_dev_profile(svc_server, dev_env, name)
    yield name
    svc_server.api("DELETE", f"/api/config/ssh/profiles/{name}")


def submit(server: Server, cluster: str, name: str, command: str = "true") -> str:
    script = f"#!/bin/bash\n#SBATCH --partition=debug\n{command}\n"
    body = {"script_content": script, "job_name": name}
    return str(server.api("POST", f"/api/jobs?transport={cluster}", json=body)["job_id"])


def wait_ended(server: Server, cluster: str, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        job: dict[str, Any] = server.api("GET", f"/api/jobs/{job_id}?transport={cluster}")
        if job["status"] not in {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING"}:
            return job
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} on {cluster} did not end within 90 s")


def test_a_job_link_opens_that_clusters_job_whatever_the_tab_shows(
    page: Page, svc_server: Server, profile: str, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    there = submit(svc_server, profile, "on-the-profile")
    wait_ended(svc_server, profile, there)
    open_page(page, "/jobs?cluster=*")  # the tab (and so the list) shows every cluster
    row = page.locator(f"tr[data-job-id='{there}'][data-cluster='{profile}']")
    expect(row.locator(".cluster-chip")).to_have_text(profile)
    row.get_by_role("link", name=there).click()
    page.wait_for_url(re.compile(rf"/jobs/{there}\?cluster={profile}$"))
    page.wait_for_selector(".page[data-ready=true] #job-cluster")
    expect(page.locator("#job-cluster")).to_have_text(profile)
    expect(page.locator(".job-name")).to_have_text("on-the-profile")
    expect(page.locator("#cluster-switch")).to_have_value(profile)  # the tab now looks at the job's cluster
    screenshot(page, "job-on-a-cluster")


def test_a_run_on_a_profile_links_its_jobs_on_that_profile(page: Page, svc_server: Server, profile: str) -> None:
    from playwright.sync_api import expect

    flow = FLOW.format(name=profile)
    svc_server.api("POST", "/api/workflows/upload", json={"yaml": flow, "filename": f"hello-{profile}.yaml"})
    run = svc_server.api("POST", f"/api/workflows/hello-{profile}/run", json={"transport": profile})
    open_page(page, "/workflows?cluster=*")
    runs = page.locator(f"tr[data-run='{run['id']}']")
    expect(runs.locator(".cluster-chip")).to_have_text(profile)
    runs.get_by_role("link").first.click()
    page.wait_for_url(f"**/runs/{run['id']}*")
    expect(page.locator("#run-cluster")).to_have_text(profile)
    job = page.locator("tr[data-job=greet] a[href^='/jobs/']")
    job.wait_for()
    job.click()
    page.wait_for_url(re.compile(rf"/jobs/\d+\?cluster={profile}$"))
    expect(page.locator("#job-cluster")).to_have_text(profile)
    expect(page.locator(".job-name")).to_have_text("greet")


def test_two_tabs_show_two_clusters(
    page: Page, svc_server: Server, profile: str, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    open_page(page, "/jobs")
    other = page.context.new_page()
    other.goto("/jobs")
    other.wait_for_selector(".page[data-ready=true]")
    other.select_option("#cluster-switch", profile)  # the pill of the second tab
    other.wait_for_url(re.compile(rf"/jobs\?cluster={profile}$"))
    other.wait_for_selector(".page[data-ready=true]")
    expect(other.locator("[aria-label='Cluster filter'] button").first).to_have_text(profile)
    expect(page.locator("[aria-label='Cluster filter'] button").first).to_have_text("local")
    page.reload()  # each tab keeps its own
    page.wait_for_selector(".page[data-ready=true]")
    expect(page.locator("#cluster-switch")).to_have_value("")
    svc_server.api("POST", f"/api/config/ssh/profiles/{profile}/activate")  # another client moves the default
    expect(page.locator("#cluster-switch option:checked")).to_have_text(f"{profile} · server default")  # an event
    expect(page.locator("[aria-label='Cluster filter'] button").first).to_have_text(profile)  # the page followed
    svc_server.api("POST", "/api/config/ssh/profiles/local/activate")
    other.get_by_role("link", name="Submit", exact=True).click()  # the sidebar's (an empty list offers "Submit a job")
    other.wait_for_url(re.compile(rf"/submit\?cluster={profile}$"))  # the URL keeps the tab's cluster
    expect(other.locator("#submit-job")).to_have_text(f"Submit to {profile}")
    screenshot(other, "submit-to-a-cluster")
    other.close()


def add_foreign_job(server: Server, job_id: str) -> None:
    """A finished job ``job_id`` of a cluster ``lab24`` in the server's store, as that cluster's history holds it."""

    def write(session: Session) -> None:
        job_repo.add_job(
            session, transport="lab24", job_id=job_id, name="on-lab24", source="web", resources={}, command=[]
        )
        done = JobStatus(job_id=job_id, state=JobState.COMPLETED, raw_state="COMPLETED", exit_code=0)
        job_repo.apply_statuses(session, "lab24", {job_id: done})

    store = Store(f"sqlite:///{server.home / '.local' / 'state' / 'svc' / 'svc.db'}")
    try:
        store.call(write)
    finally:
        store.close()


def test_the_jobs_page_keeps_equal_ids_of_two_clusters_apart(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    here = submit(svc_server, "local", "on-local")
    wait_ended(svc_server, "local", here)
    add_foreign_job(svc_server, here)
    open_page(page, "/jobs?cluster=*")
    rows = page.locator(f"tr[data-job-id='{here}']")
    expect(rows).to_have_count(2)
    expect(page.locator(f"tr[data-job-id='{here}'][data-cluster='local'] td").nth(1)).to_have_text("on-local")
    expect(page.locator(f"tr[data-job-id='{here}'][data-cluster='lab24'] td").nth(1)).to_have_text("on-lab24")
    screenshot(page, "jobs-two-clusters")
    page.get_by_role("button", name="local", exact=True).click()  # one cluster: the server default
    expect(rows).to_have_count(1)
    expect(rows.locator(".cluster-chip")).to_have_text("local")
