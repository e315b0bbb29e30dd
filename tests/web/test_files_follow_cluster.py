"""Files shows the tab's cluster's mounts (issue 28, FE-FIX2): with ``local`` as the server default and the SSH
profile lab24, a tab on lab24 browsed the server default's (none): a researcher could not reach lab24's files.
The page names the cluster it shows and offers the others; ``GET /api/files/*`` take ``?transport=``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import Server, add_dev_profile, open_page
from tests.web.test_all_clusters import env24

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture
def lab24_mount(svc_server: Server, tmp_path: Path) -> Iterator[str]:
    """The profile lab24 with a mount ``lab24-code`` holding one file; ``local`` stays the server default."""
    root = tmp_path / "lab24-code"
    root.mkdir()
    (root / "only-on-lab24.txt").write_text("lab24's file\n")
    add_dev_profile(svc_server, env24(), "lab24")
    try:
        svc_server.api(
            "POST",
            "/api/config/ssh/profiles/lab24/mounts",
            json={"name": "lab24-code", "local": str(root), "remote": "/tmp/svc-lab24-code"},
        )
        yield "lab24-code"
    finally:
        svc_server.client.delete("/api/config/ssh/profiles/lab24")


def test_the_files_api_answers_for_the_named_cluster(svc_server: Server, lab24_mount: str) -> None:
    assert svc_server.api("GET", "/api/config/ssh/profiles")["current"] == ""  # the server default is local
    assert svc_server.api("GET", "/api/files/mounts") == []  # no parameter: the server's profile, as before
    assert svc_server.api("GET", "/api/files/mounts", params={"transport": "local"}) == []
    mounts = svc_server.api("GET", "/api/files/mounts", params={"transport": "lab24"})
    assert mounts == [{"name": lab24_mount, "remote": "/tmp/svc-lab24-code"}]
    listing = svc_server.api("GET", "/api/files/browse", params={"transport": "lab24", "mount": lab24_mount})
    assert [entry["name"] for entry in listing["entries"]] == ["only-on-lab24.txt"]
    unknown = svc_server.client.get("/api/files/mounts", params={"transport": "nowhere"})
    assert unknown.status_code == 404
    assert "nowhere" in unknown.json()["detail"]
    on_local = svc_server.client.get("/api/files/browse", params={"transport": "local", "mount": lab24_mount})
    assert on_local.status_code == 404


def test_files_lists_the_tabs_clusters_mounts_and_says_which(page: Page, lab24_mount: str) -> None:
    from playwright.sync_api import expect

    open_page(page, "/files?cluster=lab24")
    expect(page.locator("#file-list")).to_contain_text("only-on-lab24.txt")
    mount_tab = page.get_by_role("group", name="Mount").get_by_role("button", name=lab24_mount, exact=True)
    expect(mount_tab).to_have_attribute("aria-pressed", "true")
    choice = page.locator("#files-cluster")  # the page says which cluster it shows
    expect(choice).to_have_value("lab24")
    page.get_by_text("only-on-lab24.txt").click()
    expect(page.locator("#file-viewer")).to_contain_text("lab24's file")

    choice.select_option("local")  # this machine's Slurm: no profile, so no mounts; the tab follows the choice
    empty = page.locator(".page .empty")
    expect(empty.locator(".empty-title")).to_have_text("No mounts to browse")
    expect(empty).to_contain_text("local is not one")
    expect(page.locator("#files-cluster")).to_have_value("local")
    expect(page.locator("#cluster-switch")).to_have_value("local")
    assert "cluster=local" in page.url


def test_files_under_all_clusters_shows_one_cluster_and_names_it(page: Page, lab24_mount: str) -> None:
    from playwright.sync_api import expect

    open_page(page, "/files?cluster=*")
    expect(page.locator("#files-cluster")).to_have_value("local")  # the server default, said
    page.locator("#files-cluster").select_option("lab24")
    expect(page.locator("#file-list")).to_contain_text("only-on-lab24.txt")


def test_the_project_config_api_answers_for_the_named_cluster(svc_server: Server, lab24_mount: str) -> None:
    assert svc_server.api("GET", "/api/config/projects") == []  # no parameter: the server's profile (none)
    projects = svc_server.api("GET", "/api/config/projects", params={"transport": "lab24"})
    assert [entry["mount_name"] for entry in projects] == [lab24_mount]
    project = svc_server.api("GET", f"/api/config/projects/{lab24_mount}", params={"transport": "lab24"})
    assert project["exists"] is False
    on_local = svc_server.client.get(f"/api/config/projects/{lab24_mount}", params={"transport": "local"})
    assert on_local.status_code == 400
    assert "not an SSH profile" in on_local.json()["detail"]


def test_settings_projects_follow_the_tabs_cluster(page: Page, lab24_mount: str) -> None:
    from playwright.sync_api import expect

    open_page(page, "/settings?tab=projects&cluster=lab24")
    expect(page.locator(f"[data-project='{lab24_mount}']")).to_contain_text(f"Project of mount {lab24_mount}")
    expect(page.locator("#projects-cluster")).to_have_value("lab24")

    page.locator("#projects-cluster").select_option("local")
    expect(page.locator(".empty-title")).to_have_text("No project to configure")
    expect(page.locator(".empty")).to_contain_text("local has none")
    expect(page.locator(f"[data-project='{lab24_mount}']")).to_have_count(0)
