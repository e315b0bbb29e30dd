"""SSH profiles and files in the browser, against the dev cluster's sshd: create, test, activate a profile;
add a mount, browse it, open a file, see what a sync would change, sync it."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import add_dev_profile, open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

DEV_HOME = Path("/home/svcdev")


@pytest.fixture
def profile_name(svc_server: Server) -> Iterator[str]:
    """A profile name for the test; whatever profiles it made are deleted after, so the server is local again."""
    yield f"dev{uuid.uuid4().hex[:6]}"
    for name in svc_server.api("GET", "/api/config/ssh/profiles")["profiles"]:
        svc_server.api("DELETE", f"/api/config/ssh/profiles/{name}")


@pytest.fixture
def remote_dir() -> Iterator[str]:
    """A fresh directory (relative to the dev user's home) for the mount's cluster side; removed after."""
    relative = f"svc-web-tests/{uuid.uuid4().hex[:8]}"
    yield relative
    shutil.rmtree(DEV_HOME / relative, ignore_errors=True)


def fill_profile(page: Page, name: str, dev_env: dict[str, str], *, port: str, env_vars: str = "") -> None:
    page.click("#new-profile")
    form = page.locator("form.profile-form")
    form.locator("input[name=name]").fill(name)
    form.locator("input[name=hostname]").fill(dev_env["SVC_DEV_SSH_HOST"])
    form.locator("input[name=username]").fill(dev_env["SVC_DEV_SSH_USER"])
    form.locator("input[name=port]").fill(port)
    form.locator("input[name=key_filename]").fill(dev_env["SVC_DEV_SSH_KEY"])
    form.locator("input[name=known_hosts]").fill(dev_env["SVC_DEV_SSH_KNOWN_HOSTS"])
    form.locator("textarea[name=env_vars]").fill(env_vars)
    form.locator("button[type=submit]").click()
    page.wait_for_selector(f"[data-profile='{name}']")


def use_dev_profile(svc_server: Server, dev_env: dict[str, str], name: str) -> None:
    """Create the dev sshd's profile ``name`` through the API and make it the server's."""
    add_dev_profile(svc_server, dev_env, name)
    svc_server.api("POST", f"/api/config/ssh/profiles/{name}/activate")


def test_create_test_and_activate_a_profile_for_the_dev_sshd(
    page: Page, dev_env: dict[str, str], profile_name: str, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    open_page(page, "/settings?tab=profiles")
    broken = f"{profile_name}-closed"
    fill_profile(page, broken, dev_env, port="1")  # nothing listens on port 1
    card = page.locator(f"[data-profile='{broken}']")
    card.get_by_role("button", name="Test connection").click()
    failure = card.locator(".test-result .alert-error")
    failure.wait_for(timeout=40_000)
    assert failure.inner_text().startswith("Cannot connect:")
    assert dev_env["SVC_DEV_SSH_KEY"] not in failure.inner_text()  # no local key path in the message

    fill_profile(page, profile_name, dev_env, port=dev_env["SVC_DEV_SSH_PORT"], env_vars="OMP_NUM_THREADS=4")
    card = page.locator(f"[data-profile='{profile_name}']")
    assert "OMP_NUM_THREADS" in card.inner_text()
    stored = svc_server.api("GET", "/api/config/ssh/profiles")["profiles"][profile_name]
    assert list(stored["env_vars"]) == ["OMP_NUM_THREADS"]  # its value is not shown back

    card.get_by_role("button", name="Edit").click()  # an edit that leaves the variables alone keeps their values
    card.locator("form.profile-form input[name=description]").fill("dev cluster")
    card.locator("form.profile-form button[type=submit]").click()
    card.locator("p", has_text="dev cluster").wait_for()
    saved = json.loads((svc_server.home / ".config" / "svc" / "profiles.json").read_text())
    assert saved["profiles"][profile_name]["env_vars"] == {"OMP_NUM_THREADS": "4"}
    card.get_by_role("button", name="Test connection").click()
    success = card.locator(".test-result .alert-ok")
    success.wait_for(timeout=40_000)
    assert "debug" in success.inner_text()  # sinfo over SSH listed the dev cluster's partitions
    card.get_by_role("button", name="Make server default").click()
    page.locator(f"[data-profile='{profile_name}'] .badge", has_text="server default").wait_for()
    assert svc_server.api("GET", "/api/config/ssh/profiles")["current"] == profile_name
    from playwright.sync_api import expect

    pill = page.locator("#cluster-switch option:checked")  # the tab follows the default: the pill says which
    expect(pill).to_have_text(f"{profile_name} · server default")
    screenshot(page, "settings-profiles")


def test_browse_a_mount_open_a_file_and_sync_it(
    page: Page,
    dev_env: dict[str, str],
    profile_name: str,
    svc_server: Server,
    tmp_path: Path,
    remote_dir: str,
    screenshot: Callable[[Page, str], None],
) -> None:
    local = tmp_path / "project"
    (local / "src").mkdir(parents=True)
    (local / "README.md").write_text("# demo project\n")
    (local / "src" / "train.py").write_text("print('training from the dashboard')\n")
    remote = remote_dir
    use_dev_profile(svc_server, dev_env, profile_name)

    open_page(page, "/settings?tab=profiles")  # the mount is added the way a person adds it
    card = page.locator(f"[data-profile='{profile_name}']")
    card.get_by_role("button", name="Add mount").click()
    card.locator("input[name=mount_name]").fill("demo")
    card.locator("input[name=mount_local]").fill(str(local))
    card.locator("input[name=mount_remote]").fill(remote)
    card.get_by_role("button", name="Add mount").last.click()
    card.locator("td", has_text=remote).wait_for()

    open_page(page, "/files")
    page.locator("#file-list button[data-name='src']").click()
    page.locator(".breadcrumbs", has_text="src").wait_for()
    page.locator("#file-list button[data-name='train.py']").click()
    page.locator("#file-viewer pre", has_text="training from the dashboard").wait_for()
    assert "file=src%2Ftrain.py" in page.url or "file=src/train.py" in page.url  # bookmarkable

    page.get_by_role("button", name="What would sync change?").click()
    page.locator("#sync-result .stat-label", has_text="files a sync would send").wait_for()
    assert page.inner_text("#sync-result .stat-value >> nth=0") == "2"
    screenshot(page, "files-inspect")
    page.get_by_role("button", name="Sync", exact=True).click()
    page.locator("#sync-result .alert-ok", has_text="Synced").wait_for(timeout=60_000)
    synced = DEV_HOME / remote / "src" / "train.py"
    assert synced.read_text() == "print('training from the dashboard')\n"

    (local / "README.md").unlink()  # gone locally: a mirror deletes it on the cluster, after saying so
    page.get_by_role("button", name="Mirror…").click()
    dialog = page.locator("dialog.dialog")
    dialog.locator(".deletions li", has_text="README.md").wait_for(timeout=60_000)
    dialog.get_by_role("button", name="Cancel", exact=True).click()
    assert (DEV_HOME / remote / "README.md").exists()  # declined: nothing deleted
    page.get_by_role("button", name="Mirror…").click()
    page.locator("dialog.dialog").get_by_role("button", name="Mirror and delete 1").click()
    page.locator("#sync-result .alert-ok", has_text="1 deleted").wait_for(timeout=60_000)
    assert not (DEV_HOME / remote / "README.md").exists()
    assert synced.exists()


FOREIGN_MARKER = {"machine_id": "0" * 32, "hostname": "laptop", "user": "grace", "claimed_at": "2026-01-02T03:04:05Z"}


def cluster_dir(path: Path, files: dict[str, str]) -> None:
    """``path`` on the dev cluster holding ``files``, owned by the dev user as if it had made them."""
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text)
    for item in (path.parent, path, *path.iterdir()):
        shutil.chown(item, user=DEV_HOME.name, group=DEV_HOME.name)


def test_force_and_adopt_are_offered_when_a_sync_is_refused_and_confirmed_on_their_dry_run(
    page: Page,
    dev_env: dict[str, str],
    profile_name: str,
    svc_server: Server,
    tmp_path: Path,
    remote_dir: str,
    screenshot: Callable[[Page, str], None],
) -> None:
    local = tmp_path / "project"
    (local / "src").mkdir(parents=True)
    (local / "README.md").write_text("# demo project\n")
    (local / "src" / "train.py").write_text("print('train')\n")
    taken, adopted = DEV_HOME / remote_dir / "taken", DEV_HOME / remote_dir / "adopted"
    cluster_dir(taken, {".svc-owner": json.dumps(FOREIGN_MARKER)})  # another machine synced it last
    cluster_dir(adopted, {"theirs.txt": "someone's data\n"})  # files svc never synced
    use_dev_profile(svc_server, dev_env, profile_name)
    for name, remote in (("taken", f"{remote_dir}/taken"), ("adopted", f"{remote_dir}/adopted")):
        svc_server.api("POST", "/api/files/mounts", json={"name": name, "local": str(local), "remote": remote})

    open_page(page, "/files?mount=taken")
    page.get_by_role("button", name="Sync", exact=True).click()
    offer = page.locator("#sync-result .remedy")
    offer.get_by_text("synced from another machine: grace@laptop").wait_for(timeout=60_000)
    screenshot(page, "files-sync-refused")
    offer.get_by_role("button", name="Take over from this machine…").click()
    dialog = page.locator("dialog.dialog")
    dialog.locator(".sends li", has_text="src/train.py").wait_for(timeout=60_000)
    assert dialog.locator("h2").inner_text() == 'Take over and sync "taken" to the cluster?'
    assert sorted(dialog.locator(".sends li").all_inner_texts()) == ["README.md", "src/train.py"]
    assert "Nothing will be deleted on the cluster" in dialog.inner_text()
    screenshot(page, "files-take-over")
    dialog.get_by_role("button", name="Cancel", exact=True).click()
    assert json.loads((taken / ".svc-owner").read_text()) == FOREIGN_MARKER  # declined: nothing changed
    assert not (taken / "README.md").exists()
    offer.get_by_role("button", name="Take over from this machine…").click()  # still offered
    page.locator("dialog.dialog").get_by_role("button", name="Take over and sync").click()
    page.locator("#sync-result .alert-ok", has_text="Synced").wait_for(timeout=60_000)
    assert (taken / "README.md").read_text() == "# demo project\n"
    assert json.loads((taken / ".svc-owner").read_text())["machine_id"] != FOREIGN_MARKER["machine_id"]

    page.get_by_role("button", name="adopted", exact=True).click()
    page.get_by_role("button", name="Mirror…").click()
    page.locator("dialog.dialog").get_by_role("button", name="Mirror and delete 1").click(timeout=60_000)
    offer.get_by_text("svc has never synced it").wait_for(timeout=60_000)
    assert (adopted / "theirs.txt").exists()  # refused: nothing changed
    offer.get_by_role("button", name="Adopt the cluster directory…").click()
    dialog.locator(".deletions li", has_text="theirs.txt").wait_for(timeout=60_000)
    assert dialog.locator("h2").inner_text() == 'Adopt and mirror "adopted" to the cluster?'
    assert sorted(dialog.locator(".sends li").all_inner_texts()) == ["README.md", "src/train.py"]
    screenshot(page, "files-adopt")
    dialog.get_by_role("button", name="Adopt and mirror (delete 1)").click()
    page.locator("#sync-result .alert-ok", has_text="1 deleted").wait_for(timeout=60_000)
    assert not (adopted / "theirs.txt").exists()
    assert (adopted / "src" / "train.py").exists()
    assert (adopted / ".svc-owner").exists()
