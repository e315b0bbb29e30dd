"""Settings in a real browser against a real ``svc serve``: a project's configuration and a mount's excludes edited,
saved and read again (issue 28 item 5), and every bad value said in words under its field, as the API judges it
(B37: the profile form said "port: Input should be less than or equal to 65535" above the form).

The project routes answer for the mounts of the server's default profile: the module makes the dev cluster's SSH
profile ``proj22`` the default, with a mount ``code`` whose local directory is in the server's home.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.web.conftest import Server, add_dev_profile, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

LONG = "x" * 1025  # one character over a pattern's limit


@pytest.fixture(scope="module")
def project(svc_server: Server, dev_env: dict[str, str]) -> Iterator[Path]:
    """The mount ``code`` of ``proj22``, the server's default profile meanwhile: its local directory."""
    local = svc_server.home / "proj-code"
    local.mkdir(exist_ok=True)
    add_dev_profile(svc_server, dev_env, "proj22")
    try:
        mount = {"name": "code", "local": str(local), "remote": "proj-code"}
        svc_server.api("POST", "/api/config/ssh/profiles/proj22/mounts", json=mount)
        svc_server.api("POST", "/api/config/ssh/profiles/proj22/activate")
        yield local
    finally:
        svc_server.client.post("/api/config/ssh/profiles/local/activate")
        svc_server.client.delete("/api/config/ssh/profiles/proj22")


def profile_of(server: Server) -> dict[str, Any]:
    return dict(server.api("GET", "/api/config/ssh/profiles")["profiles"]["proj22"])


def error_under(form: Locator, name: str) -> Locator:
    """The words the form shows under its field ``name``."""
    return form.locator(f".field:has([name='{name}']) .field-error")


def test_the_profile_form_says_a_bad_port_under_its_field(page: Page, svc_server: Server, project: Path) -> None:
    from playwright.sync_api import expect

    before = profile_of(svc_server)["port"]
    open_page(page, "/settings?tab=profiles")
    page.locator("[data-profile=proj22] .profile-head").get_by_role("button", name="Edit", exact=True).click()
    form = page.locator("[data-profile=proj22] form.profile-form")
    form.locator("input[name=port]").fill("70000")
    form.get_by_role("button", name="Save profile").click()
    expect(error_under(form, "port")).to_have_text("Must be at most 65535")
    expect(form.locator("input[name=port]")).to_have_attribute("aria-invalid", "true")
    expect(form.locator(".alert-error")).to_be_hidden()  # nothing above the form in pydantic's words
    assert profile_of(svc_server)["port"] == before


def test_a_projects_configuration_is_saved_read_again_and_judged_like_the_api(
    page: Page, svc_server: Server, project: Path, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    open_page(page, "/settings?tab=projects")
    form = page.locator("[data-project=code] form.project-form")
    expect(form).to_contain_text("no file yet")
    form.locator("[name='resources.partition']").fill("debug")
    form.locator("[name='resources.time_limit']").fill("2:00:00")
    form.locator("[name='resources.gpus_per_node']").fill("1")
    form.locator("textarea[name=exclude]").fill("data/\n\n*.ckpt\n")
    form.get_by_role("button", name="Save project").click()
    expect(form).to_contain_text("beside the project's code")
    saved = {
        "resources": {"partition": "debug", "time_limit": "2:00:00", "gpus_per_node": 1},
        "exclude": ["data/", "*.ckpt"],
    }
    assert json.loads((project / ".svc.json").read_text()) == saved
    assert svc_server.api("GET", "/api/config/projects/code")["config"] == saved

    page.reload()
    page.wait_for_selector(".page[data-ready=true]")
    expect(form.locator("[name='resources.time_limit']")).to_have_value("2:00:00")
    expect(form.locator("[name='resources.gpus_per_node']")).to_have_value("1")
    expect(form.locator("textarea[name=exclude]")).to_have_value("data/\n*.ckpt")

    form.locator("[name='resources.nodes']").fill("0")  # bad values: said under their fields, nothing written
    form.get_by_role("button", name="Save project").click()
    expect(error_under(form, "resources.nodes")).to_have_text("Must be at least 1")
    screenshot(page, "settings-project")
    form.locator("[name='resources.nodes']").fill("")
    form.locator("textarea[name=exclude]").fill(f"data/\n{LONG}")
    form.get_by_role("button", name="Save project").click()
    expect(error_under(form, "exclude")).to_contain_text("is longer than 1024 characters")
    expect(error_under(form, "resources.nodes")).to_have_count(0)
    assert json.loads((project / ".svc.json").read_text()) == saved


def test_a_mounts_excludes_are_edited_and_a_bad_one_said_under_the_field(
    page: Page, svc_server: Server, project: Path
) -> None:
    from playwright.sync_api import expect

    open_page(page, "/settings?tab=profiles")
    cell = page.locator("[data-profile=proj22] tr[data-mount=code] .mount-excludes")
    editor = page.locator("[data-profile=proj22] tr[data-exclude-of=code]")  # a row of its own below the mount's
    cell.get_by_role("button", name="Edit the excludes of code").click()
    editor.locator("textarea[name=exclude]").fill("build/\n*.tmp")
    editor.get_by_role("button", name="Save excludes").click()
    expect(cell.locator("code")).to_have_text("build/ *.tmp")
    assert profile_of(svc_server)["mounts"][0]["exclude"] == ["build/", "*.tmp"]

    page.reload()
    page.wait_for_selector(".page[data-ready=true]")
    expect(cell.locator("code")).to_have_text("build/ *.tmp")
    cell.get_by_role("button", name="Edit the excludes of code").click()
    editor.locator("textarea[name=exclude]").fill(f"build/\n{LONG}")
    editor.get_by_role("button", name="Save excludes").click()
    expect(error_under(editor, "exclude")).to_contain_text("is longer than 1024 characters")
    assert profile_of(svc_server)["mounts"][0]["exclude"] == ["build/", "*.tmp"]
