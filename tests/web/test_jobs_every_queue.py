"""The Jobs page's "All clusters" shows every cluster's live queue (issue 28, B28), in a real browser against a real
``svc serve`` whose default is this machine's Slurm 22.05 (``local``), with the SSH profiles ``lab22`` (the same Slurm
again, as svcdev), ``lab24`` (Slurm 24.11, its own job numbering) and ``gone`` (nothing answers). A job svc did not
submit runs on each of ``local`` and ``lab24`` (``sbatch`` beside svc, so svc's history does not know it): both are
listed, each with its cluster and the state squeue gives it there (``local``'s job, which ``lab22`` reads too, is one
row naming both, B27); ``gone``'s failure is one line naming it, and the other clusters still show.
Before, "All clusters" listed the default cluster's queue only.

The form's Cluster field (Sessions' start form) shows its choice whole at 1280 and 1920 px: "local · this machine"
(the pill's "local · this machine's Slurm" was cut off at 1280 px), the pill's words in its title.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24
from tests.web.test_numbers_slurm_agrees import ssh24

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.local_slurm  # sbatch and squeue of this machine's 22.05, which ``local`` reaches

NAME = "web-every-queue"
SBATCH = ["sbatch", "--parsable", "--time=5", f"--job-name={NAME}", "--output=/dev/null", "--wrap=sleep 240"]


def squeue_state(cluster: str, job_id: int) -> str:
    """The state squeue gives job ``job_id`` on ``cluster`` now ('' once it has left the queue)."""
    command = f"squeue -h -j {job_id} -o %T"
    if cluster == "lab24":
        return ssh24(command).strip()
    done = subprocess.run(command.split(), capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def running(svc_server: Server, dev_env: dict[str, str]) -> Iterator[dict[str, int]]:
    """The profiles, and a running job svc did not submit on each of ``local`` and ``lab24``."""
    add_dev_profile(svc_server, dev_env, "lab22")
    add_dev_profile(svc_server, env24(), "lab24")
    add_dev_profile(svc_server, dev_env, "gone", port="1")  # nothing listens on port 1
    jobs: dict[str, int] = {}
    try:
        local = subprocess.run(SBATCH, capture_output=True, text=True, timeout=60, check=True)
        jobs["local"] = int(local.stdout.strip().split(";")[0])
        jobs["lab24"] = int(ssh24(shlex.join(SBATCH)).strip().split(";")[0])
        for cluster, job_id in jobs.items():
            eventually_blocking(
                lambda: squeue_state(cluster, job_id) == "RUNNING",  # noqa: B023 (called before the loop moves on)
                timeout=120,
                what=f"job {job_id} running on {cluster}",
            )
        yield jobs
    finally:
        if "local" in jobs:
            subprocess.run(["scancel", str(jobs["local"])], capture_output=True, timeout=60, check=False)
        if "lab24" in jobs:
            ssh24(f"scancel {jobs['lab24']}")
        for name in ("lab22", "lab24", "gone"):
            svc_server.client.delete(f"/api/config/ssh/profiles/{name}")


def test_all_clusters_lists_every_clusters_live_queue(page: Page, running: dict[str, int]) -> None:
    from playwright.sync_api import expect

    open_page(page, "/jobs?cluster=*")
    expect(page.locator("[data-all='true']")).to_have_attribute("aria-pressed", "true")
    for cluster, job_id in running.items():
        row = page.locator(f"#jobs-table tr[data-job-id='{job_id}'][data-cluster='{cluster}']")
        expect(row).to_have_count(1, timeout=30_000)  # each cluster's queue, read over SSH on a busy machine
        names = ["local", "lab22"] if cluster == "local" else [cluster]  # one Slurm cluster, reached through both
        expect(row.locator(".job-clusters .cluster-chip")).to_have_text(names, timeout=30_000)
        expect(row.locator(".job-name-cell")).to_have_text(NAME)
        expect(row.locator(".job-state-cell")).to_contain_text(squeue_state(cluster, job_id))
    # the cluster that does not answer: one line naming it, the others still listed
    notices = page.locator(".jobs-queue-notice")
    expect(notices).to_have_count(1)
    expect(notices).to_have_attribute("data-cluster", "gone")
    expect(notices).to_contain_text("gone: the queue could not be read")
    expect(page.locator(f"#jobs-table tr[data-job-id='{running['local']}'][data-cluster='lab22']")).to_have_count(0)

    # one cluster chosen on the page: only its queue
    page.click("[data-all='false']")
    expect(page.locator(f"#jobs-table tr[data-job-id='{running['local']}'][data-cluster='local']")).to_have_count(1)
    expect(page.locator("#jobs-table tr[data-cluster='lab24']")).to_have_count(0)
    expect(notices).to_have_count(0)


@pytest.mark.parametrize("width", [1280, 1920])
def test_the_cluster_field_shows_its_choice_whole(page: Page, svc_server: Server, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    open_page(page, "/sessions?cluster=local")
    select = page.locator("select.cluster-input").first
    select.wait_for()
    assert select.locator("option:checked").inner_text() == "local · this machine"
    assert select.get_attribute("title") == "local · this machine's Slurm"  # the pill's words, on hover
    # the text the select shows fits in it: nothing of the choice is cut off
    fits = select.evaluate(
        """(el) => {
          const probe = document.createElement('span');
          const style = getComputedStyle(el);
          probe.style.font = style.font;
          probe.style.position = 'absolute';
          probe.style.whiteSpace = 'pre';
          probe.textContent = el.options[el.selectedIndex].text;
          document.body.append(probe);
          const text = probe.getBoundingClientRect().width;
          probe.remove();
          const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
          return [text, room];
        }"""
    )
    assert fits[0] <= fits[1], f"at {width} px the choice needs {fits[0]:.0f} px, the field gives it {fits[1]:.0f}"
