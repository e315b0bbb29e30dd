"""Two clusters and a queue shared with another user, in a real browser against a real ``svc serve`` (default:
this machine's Slurm 22.05 as ``local``, whose jobs run as this process's user), with the SSH profiles ``lab22``
(the same Slurm, as svcdev: another user's jobs in one queue) and ``lab24`` (Slurm 24.11, its own numbering).

- B23: a job page is bound to its job's cluster. The pill says so; switching it (a choice or the arrow keys) goes
  to the chosen cluster's Jobs and never asks another cluster for a job of that id; the tab's own choice is kept
  when a job of another cluster is opened and left.
- B26: "My jobs" and the running and pending counts are the user's own on each cluster (``local``: this process's
  user, ``lab22``: svcdev), on one cluster and on "All clusters"; the "Whole queue" toggle shows everyone's.
"""

from __future__ import annotations

import getpass
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.local_slurm  # root's and svcdev's jobs in one Slurm: this machine's 22.05

HELD = "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\nsleep 60\n"


@pytest.fixture(scope="module")
def shared(svc_server: Server, dev_env: dict[str, str]) -> Iterator[dict[str, int]]:
    """The profiles, and a held job of each: ``local`` (this process's user), ``lab22`` (svcdev), ``lab24``."""
    add_dev_profile(svc_server, dev_env, "lab22")
    add_dev_profile(svc_server, env24(), "lab24")
    jobs: dict[str, int] = {}
    try:
        for cluster in ("local", "lab22", "lab24"):
            answer = svc_server.api(
                "POST",
                "/api/jobs",
                params={"transport": cluster},
                json={"name": f"held-{cluster}", "script_content": HELD},
            )
            jobs[cluster] = answer["job_id"]
        yield jobs
    finally:
        for cluster, job_id in jobs.items():
            svc_server.client.delete(f"/api/jobs/{job_id}", params={"transport": cluster})
        for name in ("lab22", "lab24"):
            svc_server.client.delete(f"/api/config/ssh/profiles/{name}")


def asked_for_job(page: Page, job_id: int) -> list[str]:
    """Every cluster the page asks about job ``job_id`` (``GET /api/jobs/<id>``'s ``transport``), as it goes."""
    asked: list[str] = []
    pattern = re.compile(rf"/api/jobs/{job_id}(?:/[a-z]+)?\?(?:.*&)?transport=([\w.-]+)")

    def note(request: Any) -> None:
        found = pattern.search(request.url)
        if found:
            asked.append(found.group(1))

    page.on("request", note)
    return asked


def test_a_job_page_is_bound_to_its_jobs_cluster(page: Page, shared: dict[str, int]) -> None:
    from playwright.sync_api import expect

    job_id = shared["lab24"]
    asked = asked_for_job(page, job_id)
    open_page(page, "/?cluster=local")  # the tab's own choice
    open_page(page, f"/jobs/{job_id}?cluster=lab24")
    expect(page.locator("#job-cluster")).to_have_text("lab24")
    pill = page.locator("#cluster-switch")
    expect(pill).to_have_value("lab24")
    expect(pill.locator("option:checked")).to_have_text("lab24 · this job's cluster")

    # leaving the job: the tab's own cluster again
    page.click("#nav a[data-nav='overview']")
    page.wait_for_url(re.compile(r"/\?cluster=local$"))
    expect(pill).to_have_value("local")

    # back on the job, a switch of the pill goes to the chosen cluster's Jobs, not to its job of that id
    page.go_back()
    expect(page.locator("#job-cluster")).to_have_text("lab24")
    page.select_option("#cluster-switch", "lab22")
    page.wait_for_url(re.compile(r"/jobs\?cluster=lab22$"))
    page.wait_for_selector(".page[data-ready=true] #jobs-table, .page[data-ready=true] .empty")
    expect(page.locator("#job-cluster")).to_have_count(0)
    expect(pill).to_have_value("lab22")

    # the arrow keys on the pill: the same
    open_page(page, f"/jobs/{job_id}?cluster=lab24")
    expect(pill.locator("option:checked")).to_have_text("lab24 · this job's cluster")
    pill.focus()
    for _ in range(3):
        page.keyboard.press("ArrowDown")
    page.wait_for_url(re.compile(r"/jobs\?cluster=[\w*%]+$"))
    page.wait_for_selector(".page[data-ready=true]")
    expect(page.locator("#job-cluster")).to_have_count(0)
    assert set(asked) == {"lab24"}, f"job {job_id} was asked of other clusters: {asked}"


def counts_shown(page: Page) -> tuple[str, str]:
    stat = page.locator(".stat")
    return (
        stat.filter(has=page.locator(".stat-label", has_text="Running jobs")).locator(".stat-value").inner_text(),
        stat.filter(has=page.locator(".stat-label", has_text="Pending jobs")).locator(".stat-value").inner_text(),
    )


def queue_of(server: Server, cluster: str, user: str) -> list[dict[str, Any]]:
    return list(server.api("GET", "/api/jobs", params={"transport": cluster, "user": user}))


def counts_of(queue: list[dict[str, Any]]) -> tuple[str, str]:
    """Running and pending jobs of a ``GET /api/jobs`` answer, as the page writes them."""
    running, pending = (str(sum(job["status"] == state for job in queue)) for state in ("RUNNING", "PENDING"))
    return running, pending


def overview_agrees(page: Page, server: Server, user: str) -> bool:
    """The Overview of ``local`` (read again now) counts what ``GET /api/jobs?user=`` says at that moment, and its
    jobs card lists only jobs of that answer."""
    page.reload()
    page.wait_for_selector(".page[data-ready=true]")
    page.locator(".stat .stat-value", has_text=re.compile(r"^\d+$")).first.wait_for()
    title = "Whole queue on local" if user == "all" else "My jobs on local"
    listed = page.locator(".card", has=page.locator(".card-head h2", has_text=title)).locator("td a")
    queue = queue_of(server, "local", user)
    shown_ids = set(listed.all_inner_texts())
    return counts_shown(page) == counts_of(queue) and shown_ids <= {str(job["job_id"]) for job in queue}


def test_my_jobs_are_the_users_own_with_a_whole_queue_toggle(
    page: Page, svc_server: Server, shared: dict[str, int]
) -> None:
    from playwright.sync_api import expect

    theirs = shared["lab22"]  # svcdev's, in the queue this process's user shares through ``local``
    assert getpass.getuser() != "svcdev"
    assert theirs in {job["job_id"] for job in queue_of(svc_server, "local", "all")}
    open_page(page, "/?cluster=local")
    expect(page.locator("[data-queue='mine']")).to_have_attribute("aria-pressed", "true")
    # the dev queue is shared with other tests: the page and the API must agree at one moment
    eventually_blocking(lambda: overview_agrees(page, svc_server, "me"), timeout=120, what="my jobs on local")
    hint = page.locator(".stat", has=page.locator(".stat-label", has_text="Pending jobs")).locator(".stat-hint")
    expect(hint).to_have_text(f"{getpass.getuser()}'s")

    page.click("[data-queue='all']")
    page.wait_for_url(re.compile(r"/\?cluster=local&queue=all$"))
    eventually_blocking(lambda: overview_agrees(page, svc_server, "all"), timeout=120, what="the whole queue on local")
    expect(hint).to_have_text("every user's")


def blocks_agree(page: Page, server: Server, user: str) -> bool:
    """Each block of "All clusters" (read again now) counts its cluster's jobs as ``?user=`` says."""
    open_page(page, "/?cluster=*" + ("&queue=all" if user == "all" else ""))
    for name in ("local", "lab22"):
        block = page.locator(f".cluster-block[data-cluster='{name}']")
        block.locator(".queue-running").wait_for()
        shown = (block.locator(".queue-running").inner_text(), block.locator(".queue-pending").inner_text())
        if shown != counts_of(queue_of(server, name, user)):
            return False
    return True


def test_all_clusters_counts_each_clusters_own_users_jobs(
    page: Page, svc_server: Server, shared: dict[str, int]
) -> None:
    eventually_blocking(lambda: blocks_agree(page, svc_server, "me"), timeout=120, what="each block counts mine")
    eventually_blocking(lambda: blocks_agree(page, svc_server, "all"), timeout=120, what="each block, whole queue")


def jobs_query(url: str) -> dict[str, str] | None:
    """The query of a URL of the Jobs page (None for another page), in any order."""
    parts = urlsplit(url)
    return dict(parse_qsl(parts.query)) if parts.path == "/jobs" else None


def test_the_count_of_my_jobs_leads_to_my_jobs(page: Page, svc_server: Server, shared: dict[str, int]) -> None:
    from playwright.sync_api import expect

    mine, theirs = shared["local"], shared["lab22"]
    open_page(page, "/?cluster=local")
    page.locator(".stat", has=page.locator(".stat-label", has_text="Pending jobs")).click()
    page.wait_for_url(lambda url: jobs_query(url) == {"cluster": "local", "status": "PENDING", "queue": "mine"})
    page.wait_for_selector(".page[data-ready=true]")
    expect(page.locator("[data-queue='mine']")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(f"tr[data-job-id='{mine}'][data-cluster='local']")).to_have_count(1)
    expect(page.locator(f"tr[data-job-id='{theirs}']")).to_have_count(0)
    page.click("[data-queue='all']")
    page.wait_for_url(lambda url: jobs_query(url) == {"cluster": "local", "status": "PENDING"})
    # svc submitted it through lab22, the same Slurm as local's: one row naming both (B27)
    theirs_row = page.locator(f"tr[data-job-id='{theirs}']")
    expect(theirs_row).to_have_count(1)
    expect(theirs_row.locator(".job-clusters .cluster-chip")).to_have_text(["lab22", "local"])
    expect(page.locator(f"tr[data-job-id='{mine}'][data-cluster='local']")).to_have_count(1)
