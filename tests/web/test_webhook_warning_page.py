"""A chat webhook with no plugin to deliver it (the chat plugin disabled, as if not installed): ``svc serve`` says so
in its log at start, and the Settings page says so above the configuration."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from svc_host.testing.serve import ServeProcess, isolated_env, start_serve
from tests.web.conftest import TOKEN, VIEWPORT, log_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SAID = "notifications.chat_webhook_url is set but no installed plugin delivers chat notifications"


@pytest.fixture(scope="module")
def server_without_chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, Path]]:
    root = tmp_path_factory.mktemp("no-chat")
    env = isolated_env(root, token=TOKEN) | {"SVC_DISABLE_PLUGINS": "chat"}
    user = Path(env["XDG_CONFIG_HOME"]) / "svc"
    user.mkdir(parents=True)
    (user / "config.json").write_text(
        json.dumps({"notifications": {"chat_webhook_url": "https://chat.example/h/SECRET"}})
    )
    (root / "work").mkdir()
    with (root / "serve.log").open("w") as log:
        running = start_serve(base_env=env, cwd=root / "work", stdout=log, stderr=subprocess.STDOUT)
        try:
            yield running, root / "serve.log"
        finally:
            running.stop()


def test_the_server_log_and_the_settings_page_say_nothing_will_be_sent(
    server_without_chat: tuple[ServeProcess, Path], browser: Browser
) -> None:
    from playwright.sync_api import expect

    running, log = server_without_chat
    said = [line for line in log.read_text().splitlines() if SAID in line]
    assert len(said) == 1, log.read_text()
    assert "SECRET" not in log.read_text()

    context = browser.new_context(viewport=VIEWPORT, base_url=running.base, bypass_csp=True)
    try:
        page = context.new_page()
        log_in(page)
        page.goto("/settings")
        warning = page.locator("#config-warnings .alert-warn")
        expect(warning).to_contain_text(SAID)
        expect(warning).to_contain_text("pip install svc-plugin-chat")
        page.screenshot(
            path=str(Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "webhook-warning-light.png")
        )
    finally:
        context.close()
