"""The API docs the dashboard links to: Swagger UI and ReDoc from the installed package, working under the
dashboard's Content-Security-Policy (enforced here: no ``bypass_csp``), with no request to another site."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import VIEWPORT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

    from tests.web.conftest import Server


@pytest.fixture
def strict_page(browser: Browser, svc_server: Server) -> Iterator[tuple[Page, list[str], list[str]]]:
    """A page that enforces the CSP; yields it with the URLs it loaded and the errors its console showed."""
    context = browser.new_context(viewport=VIEWPORT, base_url=svc_server.base)
    context.set_default_timeout(30_000)
    page = context.new_page()
    requested: list[str] = []
    errors: list[str] = []
    page.on("requestfinished", lambda request: requested.append(request.url))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page, requested, errors
    context.close()


@pytest.mark.parametrize(("path", "drawn"), [("/docs", ".opblock-tag"), ("/redoc", "[data-section-id]")])
def test_the_api_docs_draw_from_this_server_alone(
    strict_page: tuple[Page, list[str], list[str]], svc_server: Server, path: str, drawn: str
) -> None:
    page, requested, errors = strict_page
    page.goto(path)
    page.wait_for_selector(drawn)
    assert "/api/jobs" in page.inner_text("body")
    assert requested
    own = (f"{svc_server.base}/", f"blob:{svc_server.base}/")  # blob: ReDoc's search worker, made from its script
    assert [url for url in requested if not url.startswith(own)] == []
    # ReDoc shows its maker's logo from a CDN (hidden when it fails to load): the CSP refuses it, and says so
    refused = [error for error in errors if "violates the following Content Security Policy" in error]
    assert all("https://cdn.redoc.ly/redoc/logo-mini.svg" in error for error in refused), refused
    assert [error for error in errors if error not in refused] == []
    page.screenshot(path=f"/tmp/api-docs{path.replace('/', '-')}.png")
