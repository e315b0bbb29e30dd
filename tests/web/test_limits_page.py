"""The site's job limits in the browser: the resources page lists them with what each counts now, and a run whose
jobs wait under a QOS's MaxSubmitJobsPerUser says why on its page. A server of this module's own, started after
its QOS exists (a server reads the limits once and keeps them an hour). Light and dark screenshots of both pages
go to test-output/."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from svc_host.testing.serve import isolated_env, start_serve
from tests.site_qos import own_qos
from tests.web.conftest import TOKEN, VIEWPORT, Server, log_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

OUTPUT = Path(__file__).resolve().parents[2] / "test-output"
QOS = "svc_throttle_web"
"""MaxSubmitJobsPerUser=1, granted to root (the server's user) and removed when the module ends."""
HOLD = f"#!/bin/bash\n#SBATCH --qos={QOS}\nsleep 60\n"
WORKFLOW = "name: held\njobs:\n  - {name: first, script_path: hold.sh}\n  - {name: second, script_path: hold.sh}\n"


@pytest.fixture(scope="module")
def limited_server(slurm_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("limits-server")
    work = root / "work"
    work.mkdir()
    env = isolated_env(root, token=TOKEN)
    with own_qos(QOS, "MaxSubmitJobsPerUser=1"), (root / "serve.log").open("w") as log:
        running = start_serve(base_env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        server = Server(running.base, env, running.process, root / "serve.log")
        try:
            workflows = Path(env["XDG_STATE_HOME"]) / "svc" / "workflows"
            workflows.mkdir(parents=True, exist_ok=True)
            (workflows / "hold.sh").write_text(HOLD)
            server.api("POST", "/api/workflows/upload", json={"yaml": WORKFLOW, "filename": "held.yaml"})
            yield server
        finally:
            server.client.close()
            running.stop()


@pytest.fixture
def limited_page(browser: Browser, limited_server: Server) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT, base_url=limited_server.base, bypass_csp=True)
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page)
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def save(page: Page, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    for theme in ("light", "dark"):
        if page.evaluate("document.documentElement.dataset.theme") != theme:
            page.click("#theme-toggle")
        page.wait_for_timeout(200)
        page.screenshot(path=str(OUTPUT / f"{name}-{theme}.png"), full_page=True)


def test_a_run_held_by_a_qos_limit_says_why_and_the_resources_page_shows_the_limit(
    limited_page: Page, limited_server: Server
) -> None:
    from playwright.sync_api import expect

    answer = limited_server.client.post("/api/workflows/held/run")
    assert answer.status_code == 202, answer.text
    run = answer.json()
    try:
        assert len(run["job_ids"]) == 1, run  # the second job waits in svc, never refused by sbatch
        limited_page.goto(f"/runs/{run['id']}")
        queued = limited_page.locator(".alert.queued")
        expect(queued).to_have_text(
            f"Jobs wait to be submitted — queued: MaxSubmitJobsPerUser 1 of QOS {QOS} reached (1 in queue)"
        )
        save(limited_page, "run-queued")

        limited_page.goto("/resources")
        card = limited_page.locator(".site-limits")
        expect(card.locator(".limits-facts")).to_contain_text("root on svcdev · account root · default QOS normal")
        expect(card.locator(".limits-facts .badge")).to_have_text("1 run waiting to submit")
        row = card.locator("tr", has_text="MaxJobCount")
        expect(row.locator("td").nth(2)).to_have_text("10000")
        qos_row = card.locator("tr", has_text=QOS)
        expect(qos_row).to_contain_text("MaxSubmitJobsPerUser 1")
        save(limited_page, "resources-limits")
    finally:
        limited_server.api("POST", f"/api/workflows/runs/{run['id']}/cancel")
