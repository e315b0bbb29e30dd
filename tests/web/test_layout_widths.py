"""The dashboard at 900, 1280 and 1920 px: no page scrolls sideways, the sidebar folds away behind a button when
narrow, wide tables scroll inside their card, and a wide window's width is used."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

PAGES = ["/", "/jobs", "/submit", "/workflows", "/sweeps", "/schedules", "/history", "/resources", "/settings"]


@pytest.mark.parametrize("width", [900, 1280, 1920])
def test_no_page_overflows_and_the_sidebar_fits_the_width(page: Page, svc_server: Server, width: int) -> None:
    from playwright.sync_api import expect

    svc_server.api(
        "POST",
        "/api/jobs",
        json={"name": "a-rather-long-job-name-for-the-table", "script_content": "#!/bin/bash\ntrue\n"},
    )
    page.set_viewport_size({"width": width, "height": 900})
    toggle = page.locator("#nav-toggle")
    for path in PAGES:
        open_page(page, path)
        scroll, inner = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert scroll <= inner, f"{path} at {width} px scrolls sideways: {scroll} > {inner}"
        right = page.evaluate("document.querySelector('.page').getBoundingClientRect().right")
        assert right >= inner - 40, f"{path} at {width} px leaves {inner - right} px empty on the right"
    if width < 1024:
        expect(page.locator("#sidebar")).to_be_hidden()
        expect(toggle).to_have_attribute("aria-expanded", "false")
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        expect(page.locator("#sidebar")).to_be_visible()
        page.locator("a.nav-link[data-nav=jobs]").click()  # a choice folds it away again
        page.wait_for_selector(".page[data-ready=true]")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(page.locator("#sidebar")).to_be_hidden()
    else:
        expect(toggle).to_be_hidden()
        expect(page.locator("#sidebar")).to_be_visible()


def test_a_wide_table_scrolls_inside_its_card_at_900px(page: Page, svc_server: Server) -> None:
    svc_server.api("POST", "/api/jobs", json={"name": "x" * 60, "script_content": "#!/bin/bash\ntrue\n"})
    page.set_viewport_size({"width": 900, "height": 900})
    open_page(page, "/jobs")
    page.locator("table.data tbody tr").first.wait_for()
    box = page.evaluate(
        """() => { const t = document.querySelector('table.data');
        let s = t.parentElement; while (s && getComputedStyle(s).overflowX !== 'auto') s = s.parentElement;
        return s ? [t.scrollWidth, s.clientWidth, s.closest('.card') !== null] : null; }"""
    )
    assert box is not None, "the table has no scrolling box"
    assert box[2], "the table scrolls outside of its card"
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")


@pytest.mark.parametrize(("width", "name"), [(900, "narrow-900"), (1920, "wide-1920")])
def test_layout_screenshots(page: Page, screenshot: Callable[[Page, str], None], width: int, name: str) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_page(page, "/")
    screenshot(page, name)
    if width < 1024:
        page.click("#nav-toggle")
        page.locator("#sidebar").wait_for(state="visible")
        screenshot(page, f"{name}-nav")
