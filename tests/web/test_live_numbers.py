"""Numbers that stay true on screen: relative times tick between events, and the Overview's free GPUs count each
node once (the cluster's total, not the partitions' sum: the dev node is in two partitions)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.web.conftest import Server

FLOW = "name: ticks\njobs:\n  - name: once\n    command: 'true'\n"


def test_the_overview_ticks_and_counts_each_node_once(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": FLOW, "filename": "ticks.yaml"})
    run = svc_server.api("POST", "/api/workflows/ticks/run", json={})
    open_page(page, "/")
    started = page.locator(".mini-list li", has=page.locator(f"a[href='/runs/{run['id']}']")).locator("[data-ago]")
    expect(started).to_have_text(re.compile(r"ago$"))
    first = started.inner_text()
    expect(started).not_to_have_text(first, timeout=10_000)  # "3 s ago" moved on, with no event and no reload
    total = svc_server.api("GET", "/api/resources/total")
    gpus = page.locator(".stat", has_text="GPUs free").locator(".stat-value")
    expect(gpus).to_have_text(re.compile(rf"^\d+ / {total['total_gpus']}$"))  # not the partitions' sum
