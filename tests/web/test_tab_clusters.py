"""The tab's cluster on every page, in a real browser against a real ``svc serve`` with two clusters: this machine's
Slurm 22.05 (``local``) and the SSH profiles ``lab24`` (Slurm 24.11) and ``lab22`` (22.05 again, over SSH).

- B28: "All clusters" chosen in the pill is honoured by every list page (Jobs, History, Runs, Sweeps, Resources),
  and a list showing one cluster says which (its filter names it).
- B29: a list's own cluster filter is the tab's choice: it outlives a job of another cluster opened and left.
- B39: one order of clusters everywhere: the pill, the forms' Cluster field, the lists' filters.
- B30: a default moved by ``svc profile use`` in a terminal reaches an open tab within seconds.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page

HELD = "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\nsleep 60\n"
FLOW = "name: tab-flow\njobs:\n  - name: hello\n    command: echo hello\n"


@pytest.fixture(scope="module")
def held(svc_server: Server, dev_env: dict[str, str]) -> Iterator[dict[str, int]]:
    """The profiles (lab24 made before lab22: the order of making is not the order shown) and a held job on
    ``local`` and on ``lab24``."""
    add_dev_profile(svc_server, env24(), "lab24")
    add_dev_profile(svc_server, dev_env, "lab22")
    jobs: dict[str, int] = {}
    try:
        for cluster in ("local", "lab24"):
            body = {"name": f"tab-{cluster}", "script_content": HELD}
            jobs[cluster] = svc_server.api("POST", "/api/jobs", params={"transport": cluster}, json=body)["job_id"]
        yield jobs
    finally:
        for cluster, job_id in jobs.items():
            svc_server.client.delete(f"/api/jobs/{job_id}", params={"transport": cluster})
        svc_server.client.post("/api/config/ssh/profiles/local/activate")
        for name in ("lab22", "lab24"):
            svc_server.client.delete(f"/api/config/ssh/profiles/{name}")


def row(page: Page, cluster: str, job_id: int) -> str:
    return f"tr[data-job-id='{job_id}'][data-cluster='{cluster}']"


def test_all_clusters_is_a_choice_of_every_list(page: Page, svc_server: Server, held: dict[str, int]) -> None:
    from playwright.sync_api import expect

    open_page(page, "/jobs?cluster=*")
    expect(page.locator("[aria-label='Cluster filter'] [data-all=true]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(row(page, "local", held["local"]))).to_have_count(1)
    expect(page.locator(row(page, "lab24", held["lab24"]))).to_have_count(1)

    everywhere = svc_server.api("GET", "/api/history/stats")["total"]
    open_page(page, "/history?cluster=*")
    expect(page.locator("select.cluster-filter")).to_have_value("")
    expect(page.locator("#history-total")).to_have_text(str(everywhere))
    on_lab24 = svc_server.api("GET", "/api/history/stats", params={"transport": "lab24"})["total"]
    assert on_lab24 < everywhere
    open_page(page, "/history?cluster=lab24")  # one cluster: the filter says which, the numbers are its own
    expect(page.locator("select.cluster-filter")).to_have_value("lab24")
    expect(page.locator("#history-total")).to_have_text(str(on_lab24))

    for path in ("/workflows", "/sweeps"):
        open_page(page, f"{path}?cluster=*")
        expect(page.locator("select.cluster-filter")).to_have_value("")
        open_page(page, f"{path}?cluster=lab24")
        expect(page.locator("select.cluster-filter")).to_have_value("lab24")
    svc_server.api("POST", "/api/workflows/upload", json={"yaml": FLOW, "filename": "tab-flow.yaml"})
    run = svc_server.api("POST", "/api/workflows/tab-flow/run", json={"transport": "local"})
    open_page(page, "/workflows?cluster=lab24")  # runs elsewhere only: the empty list says whose it is
    expect(page.locator(".empty-title", has_text="No runs on lab24")).to_have_count(1)
    open_page(page, "/workflows?cluster=*")
    expect(page.locator(f"tr[data-run='{run['id']}']")).to_have_count(1)

    open_page(page, "/resources?cluster=*")
    for name in ("local", "lab22", "lab24"):
        expect(page.locator(f".cluster-block[data-cluster='{name}']")).to_have_count(1)
    open_page(page, "/resources?cluster=lab24")
    expect(page.locator(".card-head h2").first).to_have_text("Now on lab24")


def test_a_lists_cluster_filter_outlives_a_job_of_another_cluster(page: Page, held: dict[str, int]) -> None:
    from playwright.sync_api import expect

    pill = page.locator("#cluster-switch")
    open_page(page, "/jobs?cluster=local")
    page.click("[aria-label='Cluster filter'] [data-all=true]")  # this list: every cluster
    expect(pill).to_have_value("*")
    page.locator(row(page, "lab24", held["lab24"])).get_by_role("link", name=str(held["lab24"])).click()
    page.wait_for_url(re.compile(rf"/jobs/{held['lab24']}\?cluster=lab24$"))
    expect(page.locator("#job-cluster")).to_have_text("lab24")
    expect(pill.locator("option:checked")).to_have_text("lab24 · this job's cluster")

    page.click("#nav a[data-nav='jobs']")  # left: the tab's choice, not the job's cluster
    page.wait_for_url(re.compile(r"/jobs\?cluster=\*$"))
    page.wait_for_selector(".page[data-ready=true]")
    expect(pill).to_have_value("*")
    expect(page.locator("[aria-label='Cluster filter'] [data-all=true]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(row(page, "local", held["local"]))).to_have_count(1)
    page.click("#nav a[data-nav='history']")
    page.wait_for_selector(".page[data-ready=true]")
    expect(page.locator("select.cluster-filter")).to_have_value("")

    page.select_option("select.cluster-filter", "lab24")  # History's filter moves the tab too
    expect(pill).to_have_value("lab24")
    page.click("#nav a[data-nav='jobs']")
    page.wait_for_selector(".page[data-ready=true]")
    expect(page.locator("[aria-label='Cluster filter'] [data-all=false]")).to_have_text("lab24")
    expect(page.locator("[aria-label='Cluster filter'] [data-all=false]")).to_have_attribute("aria-pressed", "true")


def test_one_order_of_clusters_everywhere(page: Page, held: dict[str, int]) -> None:
    pill = page.locator("#cluster-switch option")
    open_page(page, "/submit?cluster=lab22")
    in_pill = [v for v in pill.evaluate_all("(os) => os.map((o) => o.value)") if v not in ("", "*")]
    in_form = page.locator("select[name=cluster] option").evaluate_all("(os) => os.map((o) => o.value)")
    open_page(page, "/history?cluster=lab22")
    in_filter = page.locator("select.cluster-filter option").evaluate_all("(os) => os.map((o) => o.value)")[1:]
    assert in_pill[0] == "local"
    assert {"lab22", "lab24"} <= set(in_pill)
    assert in_form == in_pill, f"the pill: {in_pill}, the submit form: {in_form}"
    assert in_filter == in_pill, f"the pill: {in_pill}, History's filter: {in_filter}"


def test_a_default_moved_in_a_terminal_reaches_an_open_tab(
    page: Page, svc_server: Server, held: dict[str, int]
) -> None:
    from playwright.sync_api import expect

    open_page(page, "/jobs")  # this tab follows the server's default
    chosen = page.locator("#cluster-switch option:checked")
    expect(chosen).to_have_text("local · server default")

    def profile_use(name: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "svc_host", "profile", "use", name],
            env=svc_server.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )

    profile_use("lab24")  # another process writes the profiles file
    expect(chosen).to_have_text("lab24 · server default", timeout=20_000)
    expect(page.locator("[aria-label='Cluster filter'] [data-all=false]")).to_have_text("lab24")  # the page followed
    profile_use("local")
    expect(chosen).to_have_text("local · server default", timeout=20_000)
