"""From the walk of the dashboard with two clusters (issue 28, item 7): the Overview's "My jobs" card lists at most
eight jobs. With six running and six pending (a sweep's array tasks waiting under its limit, a held job) it showed
the pending ones first and only two of the six running beside "6 Running jobs", and did not say it left any out.
Running jobs now come first, and a card that leaves jobs out says how many it shows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import Server, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.local_slurm  # this process's user's jobs in this machine's Slurm

RUNS = "#!/bin/bash\n#SBATCH --time=5\nsleep 120\n"
HELD = "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\ntrue\n"


@pytest.fixture
def busy_queue(svc_server: Server) -> Iterator[list[int]]:
    """Two running jobs of mine and eight held ones submitted after them; the running ids, once both run."""
    running: list[int] = []
    held: list[int] = []
    try:
        for i in range(2):
            running.append(
                svc_server.api("POST", "/api/jobs", json={"name": f"runs-{i}", "script_content": RUNS})["job_id"]
            )
        for i in range(8):
            held.append(
                svc_server.api("POST", "/api/jobs", json={"name": f"held-{i}", "script_content": HELD})["job_id"]
            )
        eventually_blocking(
            lambda: [svc_server.api("GET", f"/api/jobs/{i}")["status"] for i in running],
            until=lambda states: states == ["RUNNING", "RUNNING"],
            timeout=90,
            what="both jobs to run",
        )
        yield running
    finally:
        for job_id in running + held:
            svc_server.client.delete(f"/api/jobs/{job_id}")


def test_my_jobs_card_shows_running_jobs_first_and_says_what_it_leaves_out(
    page: Page, svc_server: Server, busy_queue: list[int]
) -> None:
    from playwright.sync_api import expect

    open_page(page, "/?cluster=local")
    card = page.locator(".card", has=page.locator(".card-head h2", has_text="My jobs on local"))
    for job_id in busy_queue:
        expect(card.locator("tbody tr", has=page.locator(f"a[href^='/jobs/{job_id}?']"))).to_have_count(1)
    states = card.locator("tbody tr .badge").all_inner_texts()
    assert len(states) == 8, states
    assert states == sorted(states, key=lambda s: s != "RUNNING"), (
        f"a pending job listed before a running one: {states}"
    )
    note = card.locator(".more-jobs")
    expect(note).to_have_text(re.compile(r"^8 of (\d+) running or pending · the rest in Jobs$"))
    total = int(re.search(r"of (\d+)", note.inner_text()).group(1))  # type: ignore[union-attr]
    assert total >= 10
    expect(note.get_by_role("link", name="Jobs")).to_have_attribute("href", "/jobs?queue=mine&status=active")
