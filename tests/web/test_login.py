"""Logging in: one click on the link `svc serve` (or `svc login-link`) prints, or the token pasted into the login
view; the browser keeps a session, never the token, until it logs out."""

from __future__ import annotations

import shlex
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.web.conftest import TOKEN, VIEWPORT

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Browser, Page

    from tests.web.conftest import Server


def test_the_login_link_logs_one_browser_in_and_leaves_no_code_in_the_url(
    anonymous_page: Page, browser: Browser, svc_server: Server
) -> None:
    page = anonymous_page
    link = svc_server.login_link()
    page.goto(link)
    page.wait_for_selector(".page[data-ready=true]")
    assert page.url == f"{svc_server.base}/"  # the code is gone from the address bar
    assert page.evaluate("document.cookie") == ""  # HttpOnly: page scripts cannot read the session
    (cookie,) = page.context.cookies()
    assert cookie["name"].startswith("svc_session_")
    assert cookie["value"] != TOKEN
    page.reload()
    page.wait_for_selector(".page[data-ready=true]")
    assert page.locator("#login-token").count() == 0

    other = browser.new_context(viewport=VIEWPORT, base_url=svc_server.base)
    try:  # the same link a second time: used already
        second = other.new_page()
        second.goto(link)
        second.wait_for_selector("#login-token")
        assert "used already" in second.inner_text(".login-card")
        assert "login_code" not in second.url
    finally:
        other.close()


def test_logging_out_ends_the_session(page: Page, browser: Browser, svc_server: Server) -> None:
    (cookie,) = page.context.cookies()
    page.click("#sidebar-foot button:has-text('Log out')")
    page.wait_for_selector("#login-token")
    page.reload()
    page.wait_for_selector("#login-token")  # this browser is logged out
    copied = browser.new_context(viewport=VIEWPORT, base_url=svc_server.base)
    try:  # and whoever copied the cookie before is too
        copied.add_cookies([cookie])
        again = copied.new_page()
        again.goto("/")
        again.wait_for_selector("#login-token")
    finally:
        copied.close()


def test_without_a_cookie_the_login_view_explains_and_takes_a_pasted_token(
    anonymous_page: Page, screenshot: Callable[[Page, str], None]
) -> None:
    page = anonymous_page
    page.goto("/")
    page.wait_for_selector("#login-token")
    assert "svc serve" in page.inner_text(".login-card")
    assert "svc login-link" in page.inner_text(".login-card")
    screenshot(page, "login")
    page.fill("#login-token", "not-the-token")
    page.click(".login-form button[type=submit]")
    error = page.wait_for_selector(".login-form .alert-error:visible")
    assert "wrong token" in error.inner_text()  # the API's detail, next to the field
    page.fill("#login-token", TOKEN)
    page.click(".login-form button[type=submit]")
    page.wait_for_selector(".stat")
    assert page.locator("#login-token").count() == 0
    page.reload()
    page.wait_for_selector(".page[data-ready=true]")  # a reload keeps the session
    assert page.locator("#login-token").count() == 0


def test_a_wrong_login_link_says_so(anonymous_page: Page, svc_server: Server) -> None:
    page = anonymous_page
    page.goto("/?login_code=wrong-code-of-some-length")
    page.wait_for_selector("#login-token")
    assert "used already, has expired or is wrong" in page.inner_text(".login-card")
    assert page.url == f"{svc_server.base}/"


def test_the_login_card_names_this_server_and_a_command_that_works(
    anonymous_page: Page, browser: Browser, svc_server: Server
) -> None:
    """B19: the card named port 8000 whatever port svc serve listened on, and a token file that a server started
    with SVC_API_TOKEN never writes. The command it shows now, run as printed, gives a link that logs in."""
    page = anonymous_page
    page.goto("/")
    page.wait_for_selector("#login-token")
    card = page.inner_text(".login-card")
    assert not svc_server.base.endswith(":8000")
    assert ":8000" not in card
    assert f"{svc_server.base}/?login_code=" in card
    command = page.inner_text(".login-card .login-command")
    assert command == f"svc login-link --url {svc_server.base}/"
    assert "SVC_API_TOKEN" in page.inner_text(".login-card .login-token-source")

    argv = shlex.split(command)
    assert argv[0] == "svc"
    done = subprocess.run(
        [sys.executable, "-m", "svc_host", *argv[1:]],
        env=svc_server.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    other = browser.new_context(viewport=VIEWPORT, base_url=svc_server.base)
    try:
        fresh = other.new_page()
        fresh.goto(done.stdout.strip())
        fresh.wait_for_selector(".page[data-ready=true]")
        assert fresh.locator("#login-token").count() == 0
    finally:
        other.close()
