"""Several clusters at once, in a real browser against a real ``svc serve`` whose default is this machine's Slurm
22.05, with SSH profiles for the 22.05 loopback sshd (``lab22``), the Slurm 24.11 cluster (``lab24``, typed GPUs)
and one that does not answer (``gone``):

- the Overview's "All clusters" shows a block per cluster with that cluster's true numbers (each node counted
  once, GPUs per type), and ``gone``'s failure on its own block; ``local`` and ``lab22`` reach one Slurm cluster,
  which the totals count once and ``lab22``'s block says;
- the example site plugin's ``site`` transport, not configured, is not offered; ``/api/plugins`` says why;
- History takes a cluster, and its statistics count that cluster's jobs only;
- a job on the non-default cluster is watched: its changes and its cluster's GPU samples arrive as events;
- the job page's "Started" is the timeline's start, to the second.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import ROOT, TOKEN, Server, add_dev_profile, open_page, shot

if TYPE_CHECKING:
    from playwright.sync_api import Page

CLUSTERS = ("local", "lab22", "lab24", "gone")


def env24() -> dict[str, str]:
    out = subprocess.run([ROOT / "scripts" / "devcluster", "env24"], capture_output=True, text=True, check=True)
    facts = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    return {"SVC_DEV_" + key.removeprefix("SVC_DEV24_"): value for key, value in facts.items()}


@pytest.fixture(scope="module")
def profiles(svc_server: Server, dev_env: dict[str, str]) -> Iterator[None]:
    status = subprocess.run([ROOT / "scripts" / "devcluster", "status24"], capture_output=True, text=True, check=False)
    assert status.returncode == 0, f"the 24.11 dev cluster is not up (scripts/devcluster up24): {status.stdout}"
    add_dev_profile(svc_server, dev_env, "lab22")
    add_dev_profile(svc_server, env24(), "lab24")
    add_dev_profile(svc_server, dev_env, "gone", port="1")  # nothing listens on port 1
    yield
    for name in ("lab22", "lab24", "gone"):
        svc_server.client.delete(f"/api/config/ssh/profiles/{name}")


def test_all_clusters_shows_each_clusters_true_numbers(page: Page, svc_server: Server, profiles: None) -> None:
    from playwright.sync_api import expect

    open_page(page, "/")
    # the choices: the server default, this machine's Slurm, the profiles by name, "All clusters" last
    expect(page.locator("#cluster-switch option").last).to_have_text("All clusters")
    expect(page.locator("#cluster-switch option").nth(1)).to_have_attribute("value", "local")
    page.select_option("#cluster-switch", label="All clusters")
    page.wait_for_url("**/?cluster=*")
    blocks = page.locator(".cluster-block")
    expect(blocks).to_have_count(len(CLUSTERS))
    assert sorted(blocks.evaluate_all("els => els.map(e => e.dataset.cluster)")) == sorted(CLUSTERS)
    gone = page.locator(".cluster-block[data-cluster='gone']")
    expect(gone.locator(".cluster-block-error")).to_contain_text("Does not answer", timeout=60_000)
    # the dev clusters are shared (other tests' jobs come and go): the page and the API must agree at one moment
    eventually_blocking(lambda: numbers_agree(page, svc_server), timeout=120, what="the blocks show the API's numbers")
    # local and lab22 are this machine's 22.05 cluster, reached two ways: one cluster, counted once
    expect(page.locator(".cluster-block[data-cluster='lab22'] .cluster-block-same")).to_have_text(
        "the same Slurm cluster as local (svcdev): counted once above"
    )
    expect(page.locator(".cluster-block[data-cluster='local'] .cluster-block-same")).to_be_hidden()
    clusters = page.locator(".stat", has=page.locator(".stat-label", has_text="Clusters"))
    expect(clusters.locator(".stat-value")).to_have_text("3")
    expect(clusters.locator(".stat-hint")).to_have_text("1 not answering · 4 profiles")
    eventually_blocking(lambda: totals_agree(page, svc_server), timeout=120, what="the totals count each cluster once")
    assert page.locator(".cluster-block[data-cluster='lab24'] .gpu-types").inner_text().startswith("a100: ")
    assert page.locator(".cluster-block[data-cluster='local'] .gpu-types").count() == 0  # untyped: no type line
    expect(page.locator("#cluster-switch")).to_have_value("*")
    shot(page, "overview-all-clusters")
    page.locator(".cluster-block[data-cluster='lab24'] .cluster-block-name").click()  # one cluster again
    page.wait_for_url("**/?cluster=lab24")
    expect(page.locator("#cluster-switch")).to_have_value("lab24")
    expect(page.locator("h2", has_text="GPUs per partition on lab24")).to_have_count(1)


def numbers_agree(page: Page, server: Server) -> bool:
    """Each answering block shows its cluster's free/total GPUs (each node once) and running jobs as the API says,
    read again now (the page reloaded)."""
    from playwright.sync_api import expect

    page.reload()
    page.wait_for_selector(".page[data-ready=true]")
    for name in ("local", "lab22", "lab24"):
        block = page.locator(f".cluster-block[data-cluster='{name}']")
        expect(block.locator(".gauge-detail")).to_contain_text("free", timeout=60_000)
        expect(block.locator(".queue-running")).to_have_count(1, timeout=60_000)
        total = server.api("GET", "/api/resources/total", params={"transport": name})
        queue = server.api("GET", "/api/jobs", params={"transport": name, "user": "me"})  # the blocks count mine
        shown = (block.locator(".gauge-detail").inner_text(), block.locator(".queue-running").inner_text())
        truth = (
            f"{total['gpus_available']} / {total['total_gpus']} free",
            str(sum(job["status"] == "RUNNING" for job in queue)),
        )
        if shown != truth:
            return False
    return True


def totals_agree(page: Page, server: Server) -> bool:
    """The GPUs free on top are the 22.05 cluster's (once, though two profiles reach it) plus lab24's, read again
    now (the page reloaded)."""
    from playwright.sync_api import expect

    page.reload()
    page.wait_for_selector(".page[data-ready=true]")
    for name in ("local", "lab22", "lab24"):
        expect(page.locator(f".cluster-block[data-cluster='{name}'] .gauge-detail")).to_contain_text(
            "free", timeout=60_000
        )
    totals = [server.api("GET", "/api/resources/total", params={"transport": name}) for name in ("local", "lab24")]
    truth = f"{sum(t['gpus_available'] for t in totals)} / {sum(t['total_gpus'] for t in totals)}"
    gpus = page.locator(".stat", has=page.locator(".stat-label", has_text="GPUs free")).locator(".stat-value")
    return gpus.inner_text() == truth


def test_an_unconfigured_plugin_transport_is_not_offered(page: Page, svc_server: Server, profiles: None) -> None:
    site = next(t for t in svc_server.api("GET", "/api/plugins")["transports"] if t["name"] == "site")
    assert site["usable"] is False
    assert "plugins.site" in site["unusable_reason"]
    lab24 = next(t for t in svc_server.api("GET", "/api/plugins")["transports"] if t["name"] == "lab24")
    assert (lab24["usable"], lab24["unusable_reason"]) == (True, None)
    open_page(page, "/submit")
    offered = page.locator("#cluster-switch option").evaluate_all("els => els.map(e => e.value)")
    assert "site" not in offered
    assert {"local", "lab22", "lab24", "*"} <= set(offered)
    forms = page.locator("select.cluster-input option").evaluate_all("els => els.map(e => e.value)")
    assert "site" not in forms
    assert "*" not in forms  # a job goes to one cluster


class Events:
    """The server's event stream, read in a thread: the events as they arrive."""

    def __init__(self, server: Server) -> None:
        self.seen: list[dict[str, Any]] = []
        self._client = httpx.Client(
            base_url=server.base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx.Timeout(10, read=None)
        )
        self._thread = threading.Thread(target=self._read, daemon=True)
        self.connected = threading.Event()
        self._thread.start()

    def _read(self) -> None:
        try:
            with self._client.stream("GET", "/api/events") as stream:
                for line in stream.iter_lines():
                    self.connected.set()
                    if line.startswith("data: "):
                        self.seen.append(json.loads(line.removeprefix("data: ")))
        except httpx.HTTPError:
            return

    def close(self) -> None:
        self._client.close()


def submit_to(server: Server, cluster: str, script: str, name: str) -> str:
    body = {"script_content": script, "name": name}
    return str(server.api("POST", "/api/jobs", params={"transport": cluster}, json=body)["job_id"])


def test_events_of_a_job_on_the_non_default_cluster_arrive(svc_server: Server, profiles: None) -> None:
    events = Events(svc_server)
    try:
        assert events.connected.wait(30)
        job_id = submit_to(svc_server, "lab24", "#!/bin/bash\nsleep 2\n", "events-on-lab24")

        def ended() -> bool:
            return any(
                e["name"] == "job.status_changed"
                and e["payload"]["transport"] == "lab24"
                and e["payload"]["job_id"] == job_id
                and e["payload"]["to"] == "COMPLETED"
                for e in events.seen
            )

        eventually_blocking(ended, timeout=90, what=f"job {job_id} on lab24 announced COMPLETED")
        sampled = {e["payload"]["transport"] for e in events.seen if e["name"] == "resources.sampled"}
        assert "gone" not in sampled
    finally:
        events.close()


def test_history_counts_one_clusters_jobs(page: Page, svc_server: Server, profiles: None) -> None:
    from playwright.sync_api import expect

    submit_to(svc_server, "lab22", "#!/bin/bash\nexit 0\n", "history-lab22")  # another cluster's job
    job_id = submit_to(svc_server, "lab24", "#!/bin/bash\nexit 3\n", "history-lab24")
    eventually_blocking(
        lambda: svc_server.api("GET", f"/api/jobs/{job_id}", params={"transport": "lab24"})["status"] == "FAILED",
        timeout=90,
        what=f"job {job_id} on lab24 failed",
    )
    everywhere = svc_server.api("GET", "/api/history/stats")
    on_lab24 = svc_server.api("GET", "/api/history/stats", params={"transport": "lab24"})
    stored = svc_server.api("GET", "/api/history", params={"transport": "lab24", "limit": 1000})
    assert on_lab24["total"] == len(stored)
    assert on_lab24["failed"] == sum(
        job["status"] not in {"COMPLETED", "CANCELLED", "PENDING", "RUNNING"} for job in stored
    )
    assert everywhere["total"] > on_lab24["total"]  # other clusters' jobs are not counted in lab24's
    open_page(page, "/history?cluster=lab24")
    select = page.locator("select.cluster-filter")
    select.select_option("lab24")
    expect(page.locator("#history-total")).to_have_text(str(on_lab24["total"]))
    select.select_option("")
    expect(page.locator("#history-total")).to_have_text(str(everywhere["total"]))


def test_started_is_the_timelines_start(page: Page, svc_server: Server, profiles: None) -> None:
    from playwright.sync_api import expect

    job_id = submit_to(svc_server, "lab24", "#!/bin/bash\nsleep 5\n", "started-lab24")
    eventually_blocking(
        lambda: svc_server.api("GET", f"/api/jobs/{job_id}", params={"transport": "lab24"})["status"] == "COMPLETED",
        timeout=120,
        what=f"job {job_id} on lab24 completed",
    )
    open_page(page, f"/jobs/{job_id}?cluster=lab24")
    expect(page.locator("#job-state")).to_contain_text("COMPLETED")
    started = page.locator("#job-started").inner_text()
    timeline = page.locator(".timeline li").filter(has_text="RUNNING").locator(".tl-time").inner_text()
    assert started == timeline
    ended = page.locator("#job-ended").inner_text()
    assert ended == page.locator(".timeline li").filter(has_text="COMPLETED").locator(".tl-time").inner_text()
