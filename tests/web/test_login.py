"""Logging in: one click on the link `svc serve` prints, or the token pasted into the login view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.web.conftest import TOKEN

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server


def test_login_link_sets_the_cookie_and_leaves_no_token_in_the_url(anonymous_page: Page, svc_server: Server) -> None:
    page = anonymous_page
    page.goto(f"/jobs?token={TOKEN}")
    page.wait_for_selector(".page[data-ready=true]")
    assert page.url == f"{svc_server.base}/jobs"  # the token is gone from the address bar and the history
    assert TOKEN not in page.evaluate("document.cookie")  # HttpOnly: page scripts cannot read it
    page.reload()
    page.wait_for_selector(".page[data-ready=true]")
    assert page.locator("#login-token").count() == 0


def test_without_a_cookie_the_login_view_explains_and_takes_a_pasted_token(
    anonymous_page: Page, screenshot: Callable[[Page, str], None]
) -> None:
    page = anonymous_page
    page.goto("/")
    page.wait_for_selector("#login-token")
    assert "svc serve" in page.inner_text(".login-card")
    screenshot(page, "login")
    page.fill("#login-token", "not-the-token")
    page.click(".login-form button[type=submit]")
    error = page.wait_for_selector(".login-form .alert-error:visible")
    assert "wrong token" in error.inner_text()  # the API's detail, next to the field
    page.fill("#login-token", TOKEN)
    page.click(".login-form button[type=submit]")
    page.wait_for_selector(".stat")
    assert page.locator("#login-token").count() == 0


def test_a_wrong_login_link_says_so(anonymous_page: Page, svc_server: Server) -> None:
    page = anonymous_page
    page.goto("/?token=wrong-token-of-some-length")
    page.wait_for_selector("#login-token")
    assert "wrong or old token" in page.inner_text(".login-card")
    assert "token" not in page.url.split("?", 1)[-1] or page.url == f"{svc_server.base}/"
