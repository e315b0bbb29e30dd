"""Schedules in the browser: one created from the form (cron in a zone, args, policies) listed with its next fire, a
bad cron refused with nothing stored, disabled and enabled again, fired now into a run page that says a schedule
started it, and deleted."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import httpx
import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page

    from tests.web.conftest import Server

WORKFLOW = """name: sched-e2e
args:
  greeting: hi
jobs:
  - name: hello
    command: "echo {{ greeting }}"
"""


def test_a_schedule_is_created_listed_toggled_fired_and_deleted(
    page: Page, svc_server: Server, screenshot: Callable[[Page, str], None]
) -> None:
    from playwright.sync_api import expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": WORKFLOW, "filename": "sched-e2e.yaml"})
    page.goto("/schedules")
    page.wait_for_selector(".page[data-ready=true]")
    expect(page.locator("a.nav-link[data-nav=schedules]")).to_have_class("nav-link active")
    page.click("button:text-is('New schedule')")
    form = page.locator("form.schedule-form")
    form.locator("input[name=name]").fill("nightly-e2e")
    form.locator("select[name=workflow]").select_option("sched-e2e")
    form.locator("input[name=cron]").fill("61 * * * *")
    form.locator("input[name=timezone]").fill("Europe/Berlin")
    form.locator("textarea[name=args]").fill("greeting=hello\nrepeat=3")
    form.locator("select[name=missed]").select_option("run_once")
    form.locator("select[name=overlap]").select_option("allow")
    form.locator("button:text-is('Create schedule on local')").click()
    expect(form.locator(".field-error")).to_contain_text("the minute (1st field) must be 0-59")  # next to Cron
    assert svc_server.api("GET", "/api/schedules") == []  # refused: nothing stored

    form.locator("input[name=cron]").fill("0 3 * * *")
    form.locator("button:text-is('Create schedule on local')").click()
    row = page.locator("tr[data-schedule=nightly-e2e]")
    expect(row).to_be_visible()
    expect(form).to_be_hidden()
    stored = svc_server.api("GET", "/api/schedules/nightly-e2e")
    assert (stored["cron"], stored["timezone"], stored["args"]) == (
        "0 3 * * *",
        "Europe/Berlin",
        {"greeting": "hello", "repeat": 3},
    )
    assert (stored["missed"], stored["overlap"], stored["enabled"]) == ("run_once", "allow", True)
    expect(row.locator(".timing")).to_have_text("0 3 * * * (Europe/Berlin)")
    expect(row).to_contain_text("missed: run once · overlap: allow")
    # 03:00 in Berlin is 01:00 or 02:00 UTC: never more than a day away, shown in the browser's zone.
    assert datetime.fromisoformat(stored["next_fire_at"]).astimezone(UTC).hour in {1, 2}
    expect(row.locator(".next-fire [data-at]")).to_have_text(re.compile(r"^in \d+ (h|min)$"))
    zone = ZoneInfo(page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone"))
    local = datetime.fromisoformat(stored["next_fire_at"]).astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")
    # the browser's zone, with its name: "2026-11-28 02:00:00 UTC"
    expect(row.locator(".next-fire div").first).to_have_text(re.compile(rf"^{local} [A-Z][A-Za-z0-9+:-]*$"))
    expect(row).to_contain_text("never fired")

    row.get_by_label("enable nightly-e2e").uncheck()
    expect(row).to_have_attribute("data-enabled", "false")
    expect(row.locator(".next-fire")).to_have_text("—")
    assert svc_server.api("GET", "/api/schedules/nightly-e2e")["enabled"] is False
    row.get_by_label("enable nightly-e2e").check()
    expect(row).to_have_attribute("data-enabled", "true")
    expect(row.locator(".next-fire [data-at]")).to_be_visible()

    row.locator("button:text-is('Run now')").click()
    expect(row.locator(".badge")).to_have_text("fired")
    run_id = svc_server.api("GET", "/api/schedules/nightly-e2e")["last_run_id"]
    assert run_id
    svc_server.api(
        "POST",
        "/api/schedules",
        json={"name": "poll-e2e", "workflow": "sched-e2e", "every": 900, "description": "checks for new data"},
    )
    page.reload()  # the second one, and no toasts over the screenshot
    expect(page.locator("tr[data-schedule=poll-e2e] .timing")).to_have_text("every 15m")
    page.wait_for_timeout(500)
    screenshot(page, "schedules")
    svc_server.api("DELETE", "/api/schedules/poll-e2e")

    row.locator(f"a[href='/runs/{run_id}']").click()
    page.wait_for_url(f"**/runs/{run_id}")
    origin = page.locator(".run-origin")
    expect(origin).to_have_text("schedule")
    assert origin.locator("svg path").get_attribute("d")  # a drawn clock, not a glyph a font may lack
    expect(page.locator(".dag-node[data-name=hello]")).to_have_attribute("data-state", "COMPLETED", timeout=60_000)
    assert svc_server.api("GET", f"/api/workflows/runs/{run_id}")["args"]["greeting"] == "hello"

    page.goto("/schedules")
    page.locator("tr[data-schedule=nightly-e2e] button:text-is('Delete')").click()
    page.click("dialog button:text-is('Delete schedule')")
    expect(page.locator("tr[data-schedule=nightly-e2e]")).to_have_count(0)
    with pytest.raises(httpx.HTTPStatusError, match="404"):
        svc_server.api("GET", "/api/schedules/nightly-e2e")
    assert svc_server.api("GET", f"/api/workflows/runs/{run_id}")["id"] == run_id  # its run is kept
