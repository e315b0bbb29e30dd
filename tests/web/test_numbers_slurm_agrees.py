"""Numbers the dashboard shows, checked against what Slurm and svc's history say, with two clusters (this
machine's 22.05 as ``local`` and the 24.11 ``lab24`` over SSH), in a real browser against a real ``svc serve``.

- B24: the Overview's "Failed (7 days)" of one cluster counts that cluster's jobs only.
- B36: an ended job's log has nothing to follow or pause: those controls are off.
- B31, B32: a partition's badge says how many GPUs are free (sinfo's), and partitions sharing a node say so.
- B33: a job's GPUs name their type (squeue's TRES); "All clusters" sums each type over the clusters.
- A job svc did not submit (sbatch'ed beside it): Started and Ended are accounting's (sacct), and its page asks
  for no script svc does not have (no 404 in the browser's console).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest

from svc_host.slurm.states import normalize_state
from svc_host.slurm.values import gpus_in_gres
from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.local_slurm  # jobs sbatch'ed beside svc on this machine's 22.05

SHOTS = Path(os.environ.get("SVC_TEST_SHOTS", "/tmp"))
"""Where this module's checks leave their screenshots to look at (not docs/screenshots: those are the docs')."""
FAILING = "#!/bin/bash\n#SBATCH --time=1\necho about to fail\nexit 3\n"


@pytest.fixture(scope="module")
def lab24(svc_server: Server) -> Iterator[str]:
    add_dev_profile(svc_server, env24(), "lab24")
    try:
        yield "lab24"
    finally:
        svc_server.client.delete("/api/config/ssh/profiles/lab24")


def ended(server: Server, cluster: str, job_id: int | str) -> dict[str, Any] | None:
    job = server.api("GET", f"/api/jobs/{job_id}", params={"transport": cluster})
    return job if normalize_state(job["status"]).is_terminal and job.get("ended_at") else None


@pytest.fixture(scope="module")
def failed_local(svc_server: Server) -> dict[str, Any]:
    """A job svc submitted to ``local`` that failed (exit 3), once svc's history knows it ended."""
    job_id = svc_server.api(
        "POST", "/api/jobs", params={"transport": "local"}, json={"name": "fails", "script_content": FAILING}
    )["job_id"]
    return eventually_blocking(lambda: ended(svc_server, "local", job_id), timeout=120, what=f"job {job_id} ended")


def stat_value(page: Page, label: str) -> str:
    card = page.locator(".stat", has=page.locator(".stat-label", has_text=label))
    return card.locator(".stat-value").inner_text()


def test_failed_in_seven_days_is_the_clusters_own(
    page: Page, svc_server: Server, lab24: str, failed_local: dict[str, Any]
) -> None:
    from playwright.sync_api import expect

    week_ago = (date.today() - timedelta(days=7)).isoformat()
    everywhere = svc_server.api("GET", "/api/history/stats", params={"from": week_ago})
    of_lab24 = svc_server.api("GET", "/api/history/stats", params={"from": week_ago, "transport": lab24})
    of_local = svc_server.api("GET", "/api/history/stats", params={"from": week_ago, "transport": "local"})
    assert of_local["failed"] >= 1  # the job above: lab24's count must not hold it
    assert everywhere["failed"] > of_lab24["failed"]

    open_page(page, f"/?cluster={lab24}")
    card = page.locator(".stat", has=page.locator(".stat-label", has_text="Failed (7 days)"))
    expect(card.locator(".stat-value")).to_have_text(str(of_lab24["failed"]))
    expect(card.locator(".stat-hint")).to_have_text(
        f"{of_lab24['completed']} completed of {of_lab24['total']} on {lab24}"
    )
    open_page(page, "/?cluster=local")
    expect(card.locator(".stat-value")).to_have_text(str(of_local["failed"]))


def test_an_ended_jobs_log_has_nothing_to_follow_or_pause(page: Page, failed_local: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    open_page(page, f"/jobs/{failed_local['job_id']}?cluster=local")
    expect(page.locator("#job-state")).to_have_text("FAILED")
    log = page.locator(".log-card")
    expect(log.locator("label.check input[type=checkbox]")).to_be_disabled()
    expect(log.get_by_role("button", name="Pause")).to_be_disabled()
    expect(log.get_by_role("button", name="Jump to end")).to_be_enabled()
    expect(log.locator(".log-status")).to_contain_text("job ended")
    expect(page.locator("#job-log")).to_contain_text("about to fail")


def sbatch_beside_svc(env: dict[str, str], logs: Path) -> str:
    """A short job submitted with sbatch on this machine, as a user does without svc."""
    done = subprocess.run(
        ["sbatch", "--parsable", "--time=1", "--job-name=beside", f"--output={logs}/%j.out", "--wrap", "sleep 2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip().split(";")[0]


def accounted(job_id: str) -> tuple[datetime, datetime] | None:
    """Start and End that accounting (sacct) recorded for ``job_id``, once both are known."""
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-j", job_id, "-o", "Start,End"],
        env={**os.environ, "SLURM_TIME_FORMAT": "%s"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    if not out or not all(part.isdigit() for part in out[0].split("|")):
        return None
    start, end = (datetime.fromtimestamp(int(part), UTC) for part in out[0].split("|"))
    return start, end


def shown(at: datetime, zone: str) -> str:
    """A moment as the page's fmtTime writes it in the browser's zone, without the zone's name."""
    return at.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")


def test_a_job_svc_did_not_submit_shows_accountings_times_and_asks_for_no_script(
    page: Page, svc_server: Server, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    job_id = sbatch_beside_svc(svc_server.env, tmp_path)
    start, end = eventually_blocking(lambda: accounted(job_id), timeout=120, what=f"sacct's Start and End of {job_id}")
    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    open_page(page, f"/jobs/{job_id}?cluster=local")
    expect(page.locator("#job-state")).to_have_text("COMPLETED")
    zone = page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone")
    expect(page.locator("#job-started")).to_contain_text(shown(start, zone))
    expect(page.locator("#job-ended")).to_contain_text(shown(end, zone))
    expect(page.locator("#job-time-limit")).to_have_text("00:01:00")
    expect(page.locator("#job-no-script")).to_have_text(
        "svc did not submit this job, and Slurm keeps its script only while it is queued or running."
    )
    page.wait_for_load_state("networkidle")
    assert not failures, f"the page of a job svc did not submit got errors: {failures}"


def sinfo_gpus(partition: str) -> tuple[int, int]:
    """GPUs of ``partition``'s up nodes and those in use, as sinfo tells them now on this machine's Slurm."""
    lines = subprocess.run(
        ["sinfo", "-h", "-N", "-p", partition, "-O", "NodeList:|,StateLong:|,Gres:|,GresUsed:"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    total = used = 0
    for line in lines:
        _, state, gres, gres_used = (part.strip() for part in line.split("|"))
        if any(word in state for word in ("down", "drain", "fail")):
            continue
        total += gpus_in_gres(gres)
        used += gpus_in_gres(gres_used)
    return total, used


def partitions_of_nodes() -> dict[str, set[str]]:
    """Each partition's nodes, as sinfo lists them."""
    lines = subprocess.run(
        ["sinfo", "-h", "-N", "-o", "%N %R"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    found: dict[str, set[str]] = {}
    for line in lines:
        node, partition = line.split()
        found.setdefault(partition, set()).add(node)
    return found


def test_partition_cards_say_what_is_free_and_which_share_a_node(page: Page) -> None:
    """B31: the badge beside the in-use figure says how many GPUs are free; B32: partitions holding the same node
    say so, as their in-use figures are the same GPUs."""
    from playwright.sync_api import expect

    nodes = partitions_of_nodes()
    assert nodes["debug"] & nodes["gpu"], "the dev node is in both debug and gpu"
    open_page(page, "/resources?cluster=local")
    debug = page.locator(".partition-card[data-partition='debug']")

    def agrees() -> bool:
        total, used = sinfo_gpus("debug")
        free = total - used
        badge = f"{free} GPU{'' if free == 1 else 's'} free" if free else "full"
        shown = (debug.locator(".gpus-free").inner_text(), debug.locator(".gauge-detail").first.inner_text())
        if shown[0] == badge and shown[1].startswith(f"{used} of {total} in use"):
            return True
        page.reload()  # GPU jobs of other tests come and go: the page and sinfo must agree at one moment
        page.wait_for_selector(".page[data-ready=true] .partition-card[data-partition='debug']")
        return False

    eventually_blocking(agrees, timeout=120, what="the debug partition's GPUs as sinfo tells them")
    others = sorted(p for p in nodes if p != "debug" and nodes[p] & nodes["debug"])
    expect(debug.locator(".shared-nodes")).to_have_text(f"same nodes as {', '.join(others)}")
    expect(page.locator(".partition-whole .shared-nodes")).to_have_count(0)
    open_page(page, "/?cluster=local")  # the Overview's partition gauges say it too
    expect(page.locator(".gauges [data-partition='debug'] .shared-nodes")).to_have_text(
        f"same nodes as {', '.join(others)}"
    )
    expect(page.locator(".gauge-whole .shared-nodes")).to_have_count(0)


def ssh24(command: str) -> str:
    """Run ``command`` on the 24.11 dev cluster's login (its sshd), as its user."""
    env = env24()
    argv = ["ssh", "-p", env["SVC_DEV_SSH_PORT"], "-i", env["SVC_DEV_SSH_KEY"], "-o", "BatchMode=yes"]
    argv += ["-o", f"UserKnownHostsFile={env['SVC_DEV_SSH_KNOWN_HOSTS']}"]
    argv += [f"{env['SVC_DEV_SSH_USER']}@{env['SVC_DEV_SSH_HOST']}", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout


@pytest.fixture
def held_a100(svc_server: Server, lab24: str) -> Iterator[int]:
    """A held job on lab24 asking for one a100 (``--gres=gpu:a100:1``): held, it never takes the GPU."""
    job_id = svc_server.api(
        "POST",
        "/api/jobs",
        params={"transport": lab24},
        json={
            "name": "typed",
            "script_content": "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\n#SBATCH --partition=gpu\n"
            "#SBATCH --gres=gpu:a100:1\nsleep 60\n",
        },
    )["job_id"]
    try:
        yield job_id
    finally:
        svc_server.client.delete(f"/api/jobs/{job_id}", params={"transport": lab24})


def test_a_jobs_gpus_say_their_type_and_every_clusters_types_are_summed(
    page: Page, svc_server: Server, lab24: str, held_a100: int
) -> None:
    """B33: "GPUs 1" of ``--gres=gpu:a100:1`` says a100 (squeue says so) on the job page and in the Jobs list; the
    All-clusters "GPUs free" sums each type over the clusters."""
    from playwright.sync_api import expect

    tres = ssh24(f"squeue -h -j {held_a100} -O tres-alloc:200").strip()
    assert "gres/gpu:a100=1" in tres, tres
    open_page(page, f"/jobs/{held_a100}?cluster={lab24}")
    expect(page.locator("#job-gpus")).to_have_text("1 a100")
    open_page(page, f"/jobs?cluster={lab24}")
    row = page.locator("#jobs-table tbody tr", has=page.locator(f"a[href^='/jobs/{held_a100}?']"))
    expect(row.locator("td.job-gpus")).to_have_text("1 a100")

    totals = [svc_server.api("GET", "/api/resources/total", params={"transport": name}) for name in ("local", lab24)]
    a100 = [t for total in totals for t in total["gpu_types"] if t["type"] == "a100"]
    assert a100, "lab24 has a100s"
    open_page(page, "/?cluster=*")
    types = page.locator(".stat", has=page.locator(".stat-label", has_text="GPUs free")).locator(".gpu-types")
    expect(types).to_contain_text(f"a100: {sum(t['available'] for t in a100)} of {sum(t['total'] for t in a100)} free")


@pytest.mark.parametrize("width", [1280, 900])
def test_a_failed_rows_log_button_is_in_view_in_the_jobs_table(
    page: Page, failed_local: dict[str, Any], width: int
) -> None:
    """B34: at 1280 px (and 900) the failed row's Log button shows without scrolling the table sideways."""
    from playwright.sync_api import expect

    page.set_viewport_size({"width": width, "height": 800})
    open_page(page, "/jobs?cluster=local&status=FAILED")
    row = page.locator(f"#jobs-table tbody tr[data-job-id='{failed_local['job_id']}'][data-cluster='local']")
    log = row.get_by_role("link", name="Log")
    expect(log).to_have_attribute("href", f"/jobs/{failed_local['job_id']}?cluster=local&log=stderr")
    wrap = page.locator(".table-wrap", has=page.locator("#jobs-table"))
    box, shown = log.bounding_box(), wrap.bounding_box()
    assert box is not None
    assert shown is not None
    right = box["x"] + box["width"]
    assert shown["x"] <= box["x"], (box, shown)
    assert right <= shown["x"] + shown["width"], f"the Log button ends at {right} px, past the table's {shown}"
    assert right <= width
    page.screenshot(path=str(SHOTS / f"jobs-failed-log-{width}.png"))


@pytest.fixture
def via_lab22(svc_server: Server, dev_env: dict[str, str]) -> Iterator[int]:
    """A held job svc submitted through ``lab22``: an SSH profile to this machine's Slurm, which ``local`` reaches
    too (one slurmctld, one numbering)."""
    add_dev_profile(svc_server, dev_env, "lab22")
    job_id = svc_server.api(
        "POST",
        "/api/jobs",
        params={"transport": "lab22"},
        json={"name": "two-names", "script_content": "#!/bin/bash\n#SBATCH --hold\n#SBATCH --time=5\nsleep 60\n"},
    )["job_id"]
    try:
        yield job_id
    finally:
        svc_server.client.delete(f"/api/jobs/{job_id}", params={"transport": "lab22"})
        svc_server.client.delete("/api/config/ssh/profiles/lab22")


def test_a_job_seen_through_two_names_of_one_cluster_is_one_row(page: Page, svc_server: Server, via_lab22: int) -> None:
    """B27: ``local`` and ``lab22`` are one Slurm cluster (GET /api/resources/cluster says so); with "All
    clusters" the job svc submitted through lab22, which local's queue lists too, is one row naming both."""
    from playwright.sync_api import expect

    keys = {
        name: svc_server.api("GET", "/api/resources/cluster", params={"transport": name})["key"]
        for name in ("local", "lab22")
    }
    assert keys["local"] == keys["lab22"] is not None
    squeue = subprocess.run(
        ["squeue", "-h", "-j", str(via_lab22), "-o", "%i %T"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert squeue == [str(via_lab22), "PENDING"]  # one job, in the one queue both names read
    rows = page.locator(f"#jobs-table tbody tr:has(td.num a[href^='/jobs/{via_lab22}?'])")

    def one_row_both_names() -> bool:
        # local's queue is a shared snapshot: a job submitted through lab22 is in it from its next read on; the page
        # is ready once it knows which names reach one cluster
        open_page(page, "/jobs?cluster=*")
        chips = rows.locator(".job-clusters .cluster-chip")
        return rows.count() == 1 and chips.all_inner_texts() == ["lab22", "local"]

    eventually_blocking(one_row_both_names, timeout=120, what=f"job {via_lab22}: one row naming lab22 and local")
    expect(rows).to_have_count(1)
    expect(rows.locator(".job-clusters .cluster-chip")).to_have_text(["lab22", "local"])
    expect(rows.locator("td.num a")).to_have_attribute("href", f"/jobs/{via_lab22}?cluster=lab22")


SWEEPABLE = """name: aligned
args:
  x: 1
jobs:
  - name: work
    command: "echo {{ x }}"
"""


@pytest.mark.parametrize("width", [900, 1280, 1920])
def test_the_sweep_forms_fields_of_one_row_line_up(page: Page, svc_server: Server, width: int) -> None:
    """B21: in the workflow page's Sweep form, fields side by side start on one line (the cluster's hint below it
    pushed "Max parallel cells" down)."""
    svc_server.api("POST", "/api/workflows/upload", json={"yaml": SWEEPABLE, "filename": "aligned.yaml"})
    page.set_viewport_size({"width": width, "height": 1000})
    open_page(page, "/workflows/aligned")
    options = page.locator(".sweep-options")
    options.scroll_into_view_if_needed()
    fields = options.locator(":scope > .field")
    assert fields.count() >= 3, "the cluster, max parallel cells and max failures fields"
    placed = []  # (the field's box, its label's top)
    for i in range(fields.count()):
        box, label = fields.nth(i).bounding_box(), fields.nth(i).locator(":scope > label").bounding_box()
        assert box is not None
        assert label is not None
        placed.append((box, label["y"]))
    pairs = 0
    for i, (box, top) in enumerate(placed):
        for other, other_top in placed[i + 1 :]:
            if box["y"] < other["y"] + other["height"] and other["y"] < box["y"] + box["height"]:  # one grid row
                pairs += 1
                assert abs(top - other_top) <= 1, f"labels of one row at {top} and {other_top} px ({width} px wide)"
    assert pairs, f"no two fields side by side at {width} px"
    options.screenshot(path=str(SHOTS / f"sweep-form-{width}.png"))
