"""From the walk of the dashboard with two clusters (issue 28, item 7): at 1280 px the Jobs list of every cluster
is whole in its card. A failed row (state, exit code and Log button), a typed GPU (lab24's ``1 a100``) and a name
of a usual length made the table 70-90 px wider than its card, so the last column (From) was scrolled out of sight;
a job's name longer than the column keeps its whole text in the title. The failed job is shown as Slurm's longest
failed state (``OUT_OF_MEMORY exit 137``, which other tests' jobs on the shared cluster show in a full run: 37 px
over in CI before its Log could drop to a second line), and the GPU job as pending in three partitions (a full run
was still 4 px over: a submission time, partitions and the origin now wrap between words too)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

LONG_NAME = "preprocess-imagenet-shard-0007-of-1024"
ALIAS = "lab24-through-the-bastion-of-the-vision-group"
"""A second, long profile name for lab24 (names are the users'): a chip per name must not widen the table."""
HELD = "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\n"
JOBS = {
    "fails": "#!/bin/bash\n#SBATCH --time=5\nexit 4\n",
    "gpu-held": HELD + "#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\ntrue\n",
    LONG_NAME: HELD + "true\n",
}


@pytest.fixture(scope="module")
def lab24_jobs(svc_server: Server) -> Iterator[dict[str, int]]:
    """lab24 (Slurm 24.11 with typed GPUs) as an SSH profile beside ``local``, and a failed, a GPU and a long-named
    job on it; the failed one has ended when this returns."""
    facts = env24()
    for name in ("lab24", ALIAS):  # the alias reaches the same Slurm: each lab24 job is one row naming both
        add_dev_profile(svc_server, facts, name)
    ids: dict[str, int] = {}
    try:
        for name, script in JOBS.items():
            answer = svc_server.api(
                "POST", "/api/jobs", params={"transport": "lab24"}, json={"name": name, "script_content": script}
            )
            ids[name] = answer["job_id"]
        eventually_blocking(
            lambda: svc_server.api("GET", f"/api/jobs/{ids['fails']}", params={"transport": "lab24"})["status"],
            until=lambda status: status == "FAILED",
            timeout=90,
            what="lab24's failing job to fail",
        )
        yield ids
    finally:
        for job_id in ids.values():
            svc_server.client.delete(f"/api/jobs/{job_id}", params={"transport": "lab24"})
        for name in ("lab24", ALIAS):
            svc_server.client.delete(f"/api/config/ssh/profiles/{name}")


def test_the_jobs_table_of_every_cluster_is_whole_at_1280px(page: Page, lab24_jobs: dict[str, int]) -> None:
    from playwright.sync_api import expect

    def is_row(row: dict[str, Any], name: str) -> bool:
        return (
            row.get("job_id") in (lab24_jobs[name], str(lab24_jobs[name])) and row.get("transport", "lab24") == "lab24"
        )

    def as_out_of_memory(rows: Any) -> Any:
        for row in rows if isinstance(rows, list) else []:
            if is_row(row, "fails"):
                row.update(status="OUT_OF_MEMORY", exit_code=137)
            if is_row(row, "gpu-held"):  # a job pending in several partitions lists them all
                row.update(partition="gpu,debug,preempt-a100-long")
        return rows

    def relabel(route: Route) -> None:
        answer = route.fetch()
        route.fulfill(response=answer, body=json.dumps(as_out_of_memory(answer.json())))

    page.route("**/api/jobs?*", relabel)
    page.route("**/api/history?*", relabel)
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, "/jobs?cluster=*")
    failed_row = f"tr[data-cluster=lab24][data-job-id='{lab24_jobs['fails']}']"
    failed = page.locator(failed_row)
    expect(failed.locator(".job-log")).to_be_visible(timeout=60_000)
    expect(failed.locator(".job-state-cell")).to_contain_text("exit 137")
    held_row = page.locator(f"tr[data-cluster=lab24][data-job-id='{lab24_jobs['gpu-held']}']")
    expect(held_row).to_contain_text("gpu,debug,preempt-a100-long")
    expect(page.locator(f"tr[data-cluster=lab24][data-job-id='{lab24_jobs['gpu-held']}'] .job-gpus")).to_have_text(
        "1 a100"
    )
    wrap = page.locator("#jobs-table").locator("xpath=..")
    scroll, client = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
    assert scroll <= client, f"the Jobs table is {scroll - client} px wider than its card at 1280 px"
    right_edge = wrap.evaluate("w => w.getBoundingClientRect().right")
    for selector in ("#jobs-table th:last-child", f"{failed_row} .job-log"):
        box = page.locator(selector).bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= right_edge, f"{selector} ends past the card's right edge"
    long_row = page.locator(f"tr[data-cluster=lab24][data-job-id='{lab24_jobs[LONG_NAME]}'] .job-name-cell")
    expect(long_row).to_have_attribute("title", LONG_NAME)
