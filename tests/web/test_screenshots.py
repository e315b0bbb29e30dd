"""Every page of the dashboard's shell in light and dark, saved to docs/screenshots/ (README shows them).

Runs after the other browser tests of the session (file order), so the pages show real jobs. Each page is
also checked for what a person would see first: its heading and no error box.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from svc_host.testing.plugin import HOLDS_GPUS
from tests.web.conftest import add_dev_profile, open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

pytestmark = [HOLDS_GPUS]  # the busy cluster holds three of the four GPUs while pages are shot

TRAINING_SCRIPT = """#!/bin/bash
#SBATCH --partition=debug
echo "loading dataset (50,000 images)"
for epoch in $(seq 1 12); do
  echo "epoch $epoch/12  loss=0.$((900 - epoch * 61))  acc=0.$((50 + epoch * 3))"
done
echo "checkpoint written to ckpt/model-final.pt"
"""


def wait_finished(server: Server, job_id: int) -> None:
    deadline = time.monotonic() + 90
    while server.api("GET", f"/api/jobs/{job_id}")["status"] in {"PENDING", "RUNNING", "COMPLETING"}:
        assert time.monotonic() < deadline, f"job {job_id} did not finish"
        time.sleep(1)


def busy_script(lines: str, *, gres: str | None = None, partition: str = "gpu", exit_code: int = 0) -> str:
    gres_line = f"#SBATCH --gres={gres}\n" if gres else ""
    return f"#!/bin/bash\n#SBATCH --partition={partition}\n{gres_line}{lines}\nexit {exit_code}\n"


@pytest.fixture(scope="module")
def busy_cluster(svc_server: Server) -> Iterator[list[int]]:
    """A few jobs holding GPUs while the pages are shot (gauges and tables with something in them)."""
    running = [
        ("llama-finetune", busy_script("echo step 1; sleep 300", gres="gpu:2")),
        ("bert-eval", busy_script("echo eval; sleep 300", gres="gpu:1")),
        ("data-prep", busy_script("echo shards; sleep 300", partition="debug")),
    ]
    ids = [svc_server.api("POST", "/api/jobs", json={"name": n, "script_content": s})["job_id"] for n, s in running]
    failing = svc_server.api(
        "POST",
        "/api/jobs",
        json={"name": "sweep-lr-0.1", "script_content": busy_script("echo diverged >&2", exit_code=1)},
    )
    deadline = time.monotonic() + 60
    while any(svc_server.api("GET", f"/api/jobs/{i}")["status"] != "RUNNING" for i in ids):
        assert time.monotonic() < deadline, "the screenshot jobs did not start"
        time.sleep(1)
    wait_finished(svc_server, failing["job_id"])
    yield ids
    for job_id in ids:
        svc_server.client.delete(f"/api/jobs/{job_id}")


@pytest.fixture(scope="module")
def finished_job(svc_server: Server, busy_cluster: list[int]) -> int:
    job = svc_server.api("POST", "/api/jobs", json={"name": "resnet-train", "script_content": TRAINING_SCRIPT})
    wait_finished(svc_server, job["job_id"])
    return int(job["job_id"])


@pytest.mark.parametrize(
    ("path", "name", "heading"),
    [
        ("/", "overview", "Overview"),
        ("/jobs", "jobs", "Jobs"),
        ("/submit", "submit", "Submit a job"),
        ("/history", "history", "History"),
        ("/resources", "resources", "Resources"),
        ("/settings", "settings", "Settings"),
        ("/settings?tab=environment", "settings-environment", "Settings"),
    ],
)
def test_page_screenshots(
    page: Page,
    svc_server: Server,
    finished_job: int,
    path: str,
    name: str,
    heading: str,
    screenshot: Callable[[Page, str], None],
) -> None:
    if name == "settings":  # a user layer over the defaults, as a real setup has; undone below
        svc_server.api("PUT", "/api/config", json={"resources": {"partition": "gpu", "time_limit": "4:00:00"}})
    open_page(page, path)
    assert page.inner_text("#page-title") == heading
    assert page.locator(".page > .alert-error:visible").count() == 0
    if name == "submit":
        page.fill("input[name=name]", "resnet-train")
        page.select_option("select[name=partition]", "gpu")
        page.fill("input[name=gpus_per_node]", "2")
        page.fill("input[name=time_limit]", "4:00:00")
        page.fill("input[name=memory_per_node]", "32G")
        page.fill("textarea[name=command]", "python train.py --epochs 12 --lr 3e-4")
        page.wait_for_function("document.querySelector('#script-preview')?.textContent.includes('gres')")
    page.wait_for_timeout(300)  # charts draw on the next frame
    screenshot(page, name)
    if name == "settings":
        assert page.locator("#config-table tr", has_text="resources.partition").locator(".layer-user").count() == 1
        svc_server.api("POST", "/api/config/reset")


def test_job_page_screenshot(page: Page, finished_job: int, screenshot: Callable[[Page, str], None]) -> None:
    open_page(page, f"/jobs/{finished_job}")
    page.wait_for_function("document.querySelector('#job-log')?.textContent.includes('checkpoint written')")
    assert page.inner_text("#job-state") == "COMPLETED"
    page.wait_for_function("document.querySelector('#job-script')?.textContent.includes('epoch')")
    screenshot(page, "job")


@pytest.fixture
def mounted_profile(svc_server: Server, dev_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    project = tmp_path / "resnet"
    (project / "configs").mkdir(parents=True)
    (project / "train.py").write_text("import torch\n\n\ndef main():\n    print('training')\n")
    (project / "configs" / "base.yaml").write_text("lr: 3.0e-4\nepochs: 12\nbatch_size: 256\n")
    (project / "README.md").write_text("# resnet\n\nTrain with `svc submit -m resnet -- python train.py`.\n")
    name = f"shot{uuid.uuid4().hex[:6]}"
    add_dev_profile(svc_server, dev_env, name, description="the dev cluster over loopback SSH")
    svc_server.api(
        "POST",
        f"/api/config/ssh/profiles/{name}/mounts",
        json={"name": "resnet", "local": str(project), "remote": f"svc-web-tests/{name}"},
    )
    svc_server.api("POST", f"/api/config/ssh/profiles/{name}/activate")
    yield name
    svc_server.api("DELETE", f"/api/config/ssh/profiles/{name}")


def test_files_screenshot(page: Page, mounted_profile: str, screenshot: Callable[[Page, str], None]) -> None:
    open_page(page, "/files?mount=resnet&file=train.py")
    page.locator("#file-viewer pre", has_text="def main").wait_for()
    page.get_by_role("button", name="What would sync change?").click()
    page.locator("#sync-result .stat-label", has_text="files a sync would send").wait_for(timeout=60_000)
    screenshot(page, "files")
