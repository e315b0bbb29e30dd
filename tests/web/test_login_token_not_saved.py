"""The login form does not invite the browser to save the API token (issue 26, Info): the token is the permanent
key to svc, and a saved password is offered to whoever uses the browser profile next, and synced with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page


def test_the_token_field_is_not_a_password_to_remember(anonymous_page: Page) -> None:
    anonymous_page.goto("/")
    field = anonymous_page.wait_for_selector("#login-token")
    assert field is not None
    assert field.get_attribute("autocomplete") == "off"
    assert field.get_attribute("type") == "password"  # still hidden while typed
