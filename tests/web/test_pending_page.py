"""Why pending and "Will it fit?" in the browser: a held job's page says why it waits, the submit form asks
Slurm whether a job would fit without submitting it. Light and dark screenshots go to test-output/pending/."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from playwright.sync_api import Page

from tests.web.conftest import ROOT, Server, open_page

OUTPUT = Path(os.environ.get("SVC_TEST_OUTPUT", ROOT / "test-output")) / "pending"


def shoot(page: Page, name: str) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    for theme in ("light", "dark"):
        if page.evaluate("document.documentElement.dataset.theme") != theme:
            page.click("#theme-toggle")
        page.wait_for_timeout(200)
        page.screenshot(path=str(OUTPUT / f"{name}-{theme}.png"))


def test_a_held_job_says_why_it_waits(page: Page, svc_server: Server) -> None:
    script = "#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --hold\nsleep 60\n"
    job_id = svc_server.api("POST", "/api/jobs", json={"script_content": script, "name": "web-held"})["job_id"]
    try:
        open_page(page, f"/jobs/{job_id}")
        page.wait_for_selector("#job-pending-text:has-text('JobHeldUser')")
        assert page.inner_text("#job-pending-text") == (
            f"Job {job_id} is held (JobHeldUser): it will not start until it is released (scontrol release {job_id})."
        )
        assert "it will not start as it is" in page.inner_text("#job-pending")
        shoot(page, "job-pending")
    finally:
        svc_server.api("DELETE", f"/api/jobs/{job_id}")
    page.wait_for_selector("#job-state:has-text('CANCELLED')")
    page.wait_for_selector("#job-pending", state="hidden")  # no longer pending: the box goes


def test_will_it_fit_asks_slurm_and_submits_nothing(page: Page) -> None:
    open_page(page, "/submit")
    page.fill("input[name=name]", "web-fit")
    page.select_option("select[name=partition]", "gpu")
    page.fill("input[name=gpus_per_node]", "9")
    page.fill("textarea[name=command]", "python train.py")
    page.click("#test-fit")
    page.wait_for_selector("#fit-answer-text")
    assert page.inner_text("#fit-answer-text") == (
        "Slurm would not accept this job: Requested node configuration is not available."
    )
    page.fill("input[name=gpus_per_node]", "1")
    page.fill("input[name=time_limit]", "5")
    page.click("#test-fit")
    page.wait_for_selector("#fit-answer-text:has-text(\"partition 'gpu'\")")
    assert "on localhost in partition 'gpu' (1 processor)" in page.inner_text("#fit-answer-text")
    assert page.url.endswith("/submit")
    page.wait_for_selector("#script-preview:has-text('--time=5')")
    shoot(page, "submit-fit")
    queue = subprocess.run(["squeue", "-h", "-n", "web-fit"], capture_output=True, text=True, timeout=60, check=True)
    assert queue.stdout == ""
