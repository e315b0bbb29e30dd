"""A main path with the keyboard only: Tab to the sidebar and open a page with Enter, choose a cluster in the top
bar's pill, open a dialog and close it with Escape; focus is visible wherever it lands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.web.conftest import Server

FOCUS = """() => { const el = document.activeElement; const style = getComputedStyle(el);
  const ring = style.outlineStyle !== 'none' || style.boxShadow !== 'none';
  return { id: el.id, text: (el.textContent || '').trim().slice(0, 40), visible: el.matches(':focus-visible') && ring };
}"""


def tab_to(page: Page, wanted: str, *, limit: int = 60) -> dict[str, str]:
    """Press Tab until the focused element matches the CSS selector ``wanted``; each stop shows its focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focus = page.evaluate(FOCUS)
        assert focus["visible"], f"focus on {focus} is not visible"
        if page.evaluate(f"document.activeElement.matches({wanted!r})"):
            return focus
    raise AssertionError(f"Tab never reached {wanted}")


def test_a_keyboard_only_pass(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    svc_server.api(
        "POST",
        "/api/workflows/upload",
        json={"yaml": "name: kb-wf\njobs:\n  - name: a\n    command: echo a\n", "filename": "kb-wf.yaml"},
    )
    svc_server.api(
        "POST",
        "/api/schedules",
        json={"name": "kb-nightly", "workflow": "kb-wf", "cron": "0 3 * * *", "enabled": False},
    )
    open_page(page, "/")
    page.evaluate("document.activeElement && document.activeElement.blur()")

    tab_to(page, "a.nav-link[data-nav=schedules]")  # the sidebar, in order
    page.keyboard.press("Enter")
    page.wait_for_selector(".page[data-ready=true]")
    expect(page).to_have_url(f"{svc_server.base}/schedules")

    tab_to(page, "#cluster-switch")  # the pill: a native select, chosen with the arrow keys
    page.keyboard.press("ArrowDown")
    expect(page).to_have_url(f"{svc_server.base}/schedules?cluster=local")
    page.wait_for_selector(".page[data-ready=true]")

    tab_to(page, "button.btn-primary")  # "New schedule": Space opens the form, its first field takes the focus
    assert page.evaluate("document.activeElement.textContent") == "New schedule"
    page.keyboard.press("Space")
    expect(page.locator("form.schedule-form input[name=name]")).to_be_focused()

    tab_to(page, "tr[data-schedule=kb-nightly] button.btn-ghost-danger")
    page.keyboard.press("Enter")
    dialog = page.locator("dialog.dialog[open]")
    expect(dialog).to_be_visible()
    expect(dialog.locator("button:text-is('Cancel')")).to_be_focused()  # Enter alone never confirms
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert "kb-nightly" in [s["name"] for s in svc_server.api("GET", "/api/schedules")]
    svc_server.api("DELETE", "/api/schedules/kb-nightly")
