"""From the walk of the dashboard with two clusters (issue 28, item 7), the job page's log:

- A job whose log is unreadable (plain ``sbatch -o /dev/null``, not submitted by svc) answered a 502 "not a regular
  file" on ``local`` and a 403 "names a file svcdev does not own" on ``lab24``: one situation, two words. It is now
  one 400 (the spec's "path not a file") saying the log is not a regular file, on both; the page shows that once,
  without "(stdout is empty so far)" under it, and stops asking (no console error every 2 s).
- "updated 08:38:08 PM": the log's clock now reads like every other time of the dashboard (24-hour, format.js).
- A FAILED job's page opens on its stderr when it has any (it opened on an empty stdout).

Real ``svc serve`` on this machine's Slurm 22.05 (``local``) with the SSH profile ``lab24`` (Slurm 24.11)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.local_slurm  # a plain sbatch on this machine's Slurm, and svcdev's on lab24

NOWHERE = ["sbatch", "--parsable", "--hold", "--partition=debug", "--output=/dev/null", "--wrap=true"]
UNREADABLE = re.compile(r"^job \d+ writes its log to /dev/null, which is not a regular file \(character special file\)")


def lab24_ssh(env: dict[str, str]) -> list[str]:
    """``ssh`` to lab24 as svcdev (the profile's login), for a job submitted outside svc."""
    return [
        "ssh",
        "-i",
        env["SVC_DEV_SSH_KEY"],
        "-p",
        env["SVC_DEV_SSH_PORT"],
        "-o",
        f"UserKnownHostsFile={env['SVC_DEV_SSH_KNOWN_HOSTS']}",
        "-o",
        "BatchMode=yes",
        f"{env['SVC_DEV_SSH_USER']}@{env['SVC_DEV_SSH_HOST']}",
    ]


@pytest.fixture(scope="module")
def nowhere(svc_server: Server) -> Iterator[dict[str, str]]:
    """A held job writing its log to /dev/null on each cluster, submitted with plain sbatch (not through svc)."""
    env = env24()
    add_dev_profile(svc_server, env, "lab24")
    prefix = {"local": [], "lab24": lab24_ssh(env)}
    jobs: dict[str, str] = {}
    try:
        for cluster, argv in prefix.items():
            done = subprocess.run([*argv, *NOWHERE], capture_output=True, text=True, timeout=60, check=True)
            jobs[cluster] = done.stdout.strip().split(";")[0]
        yield jobs
    finally:
        for cluster, job_id in jobs.items():
            subprocess.run([*prefix[cluster], "scancel", job_id], capture_output=True, timeout=60, check=False)
        svc_server.client.delete("/api/config/ssh/profiles/lab24")


def test_an_unreadable_log_is_one_answer_on_both_clusters(svc_server: Server, nowhere: dict[str, str]) -> None:
    for cluster, job_id in nowhere.items():
        answer = svc_server.client.get(f"/api/jobs/{job_id}/logs", params={"transport": cluster})
        assert answer.status_code == 400, (cluster, answer.text)
        assert UNREADABLE.match(answer.json()["detail"]), (cluster, answer.text)


def test_the_page_says_it_once_and_stops_asking(page: Page, nowhere: dict[str, str]) -> None:
    from playwright.sync_api import expect

    job_id = nowhere["lab24"]
    reads: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: reads.append(r.url) if f"/api/jobs/{job_id}/logs" in r.url else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    open_page(page, f"/jobs/{job_id}?cluster=lab24")
    card = page.locator(".log-card")
    expect(card.locator(".alert:visible")).to_have_count(1)
    expect(card.locator(".alert:visible")).to_contain_text("which is not a regular file")
    expect(page.locator("#job-log")).to_be_hidden()
    expect(card).not_to_contain_text("is empty")
    expect(card.locator(".log-status")).to_have_text("no log to read")
    expect(card.get_by_role("checkbox", name="Follow")).to_be_disabled()
    expect(card.get_by_role("button", name="Download")).to_be_disabled()
    page.wait_for_timeout(5000)  # two polls' time (every 2 s): none comes
    assert len(reads) == 1, reads
    assert len(errors) <= 1, errors


def submit(server: Server, name: str, script: str) -> Any:
    return server.api("POST", "/api/jobs", params={"transport": "local"}, json={"name": name, "script_content": script})


def test_a_failed_job_opens_on_its_stderr_and_the_clock_reads_like_every_time(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    failed = submit(svc_server, "fails", "#!/bin/bash\necho started\necho 'it broke' >&2\nexit 3\n")["job_id"]
    held = submit(svc_server, "held", "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\ntrue\n")["job_id"]
    try:
        eventually_blocking(
            lambda: svc_server.api("GET", f"/api/jobs/{failed}", params={"transport": "local"})["status"],
            until=lambda state: state == "FAILED",
            timeout=90,
            what=f"job {failed} to fail",
        )
        open_page(page, f"/jobs/{failed}?cluster=local")
        expect(page.locator(".log-card .segmented button", has_text="stderr")).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#job-log")).to_have_text("it broke\n")

        open_page(page, f"/jobs/{held}?cluster=local")
        expect(page.locator(".log-card .log-status")).to_have_text(re.compile(r"following, updated \d\d:\d\d:\d\d$"))
    finally:
        svc_server.client.delete(f"/api/jobs/{held}", params={"transport": "local"})
