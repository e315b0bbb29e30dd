"""From the walk of the dashboard with two clusters (issue 28, item 7): a lab24 run's page and a lab24 sweep's page
kept "All clusters" (or the tab's cluster) in the pill, although each shows one cluster's thing. Like a job's page
(B23), they are now bound to their cluster: the pill says "lab24 · this run's cluster" / "this sweep's cluster", a
switch goes to the chosen cluster's runs (Workflows) or Sweeps, and the tab's own choice is kept when the page is
left. Real ``svc serve`` on this machine's Slurm 22.05 with the SSH profile ``lab24`` (Slurm 24.11)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.cluster

FLOW = "name: bound-{kind}\njobs:\n  - name: nap\n    command: sleep 60\n"


@pytest.fixture(scope="module")
def on_lab24(svc_server: Server) -> Iterator[dict[str, str]]:
    """The profile ``lab24``, a run and a sweep (two cells) of a one-job workflow there; cancelled after."""
    add_dev_profile(svc_server, env24(), "lab24")
    made: dict[str, str] = {}
    try:
        for kind in ("run", "sweep"):
            svc_server.api(
                "POST", "/api/workflows/upload", json={"yaml": FLOW.format(kind=kind), "filename": f"bound-{kind}.yaml"}
            )
        made["run"] = svc_server.api("POST", "/api/workflows/bound-run/run", json={"transport": "lab24"})["id"]
        made["sweep"] = str(
            svc_server.api(
                "POST",
                "/api/workflows/bound-sweep/run",
                json={"transport": "lab24", "sweep": {"matrix": {"x": [1, 2]}, "max_parallel": 2}},
            )["id"]
        )
        yield made
    finally:
        if "run" in made:
            svc_server.client.post(f"/api/workflows/runs/{made['run']}/cancel")
        if "sweep" in made:
            svc_server.client.post(f"/api/sweep_runs/{made['sweep']}/cancel")
        svc_server.client.delete("/api/config/ssh/profiles/lab24")


@pytest.mark.parametrize(
    ("kind", "page_path", "chip", "list_path"),
    [("run", "/runs/{id}", "#run-cluster", "/workflows"), ("sweep", "/sweeps/{id}", "#sweep-cluster", "/sweeps")],
)
def test_a_run_or_sweep_page_is_bound_to_its_cluster(
    page: Page, on_lab24: dict[str, str], kind: str, page_path: str, chip: str, list_path: str
) -> None:
    from playwright.sync_api import expect

    open_page(page, "/?cluster=*")  # the tab's own choice: All clusters
    open_page(page, page_path.format(id=on_lab24[kind]))
    expect(page.locator(chip)).to_have_text("lab24")
    pill = page.locator("#cluster-switch")
    expect(pill).to_have_value("lab24")
    expect(pill.locator("option:checked")).to_have_text(f"lab24 · this {kind}'s cluster")
    title = page.locator(".summary-card .job-head").bounding_box()
    facts = page.locator(".summary-card .run-facts").bounding_box()
    assert title
    assert facts
    assert facts["y"] - (title["y"] + title["height"]) >= 12, "no room under the title"

    # leaving the page: the tab's own cluster again
    page.click("#nav a[data-nav='overview']")
    page.wait_for_url(re.compile(r"/\?cluster=(\*|%2A)$"))
    expect(pill).to_have_value("*")

    # back on the page, a switch of the pill goes to the chosen cluster's list
    page.go_back()
    expect(page.locator(chip)).to_have_text("lab24")
    expect(pill).to_have_value("lab24")
    page.select_option("#cluster-switch", "local")
    page.wait_for_url(re.compile(rf"{list_path}\?cluster=local$"))
    page.wait_for_selector(".page[data-ready=true]")
    expect(page.locator(chip)).to_have_count(0)
    expect(pill).to_have_value("local")
