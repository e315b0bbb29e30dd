"""Forms speak people: what the API refuses is said next to the field, in words (no regex, no ``body.`` path), a
name the browser can check is checked as one types, and a logged-out first load asks once, quietly."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.web.conftest import Server

WORKFLOW = "name: words-wf\njobs:\n  - name: hello\n    command: echo hi\n"


def field_error(page: Page, control: str) -> str:
    """The words under a control (its `.field` holds them)."""
    from playwright.sync_api import expect

    note = page.locator(f".field:has({control}) .field-error")
    expect(note).to_be_visible()
    return note.inner_text()


def assert_words(text: str) -> None:
    for raw in ("body.", "^[", "should match pattern", "Input should", "Bad hour"):
        assert raw not in text, text


def test_schedule_form_says_a_bad_cron_and_name_next_to_their_fields(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    svc_server.api("POST", "/api/workflows/upload", json={"yaml": WORKFLOW, "filename": "words-wf.yaml"})
    open_page(page, "/schedules")
    page.click("button:text-is('New schedule')")
    form = page.locator("form.schedule-form")
    form.locator("select[name=workflow]").select_option("words-wf")
    form.locator("input[name=name]").fill("nightly-words")
    form.locator("input[name=cron]").fill("0 25 * * *")
    form.locator("button[type=submit]").click()
    cron = field_error(page, "input[name=cron]")
    assert "the hour (2nd field) must be 0-23" in cron
    assert_words(cron)
    expect(form.locator("input[name=cron]")).to_be_focused()  # the first refused field takes the focus
    expect(form.locator("input[name=cron]")).to_have_attribute("aria-invalid", "true")
    assert_words(form.inner_text())
    assert svc_server.api("GET", "/api/schedules") == []
    form.locator("input[name=cron]").fill("0 3 * * *")  # typing clears the field's error
    expect(form.locator(".field-error")).to_have_count(0)


def test_profile_name_is_checked_as_one_types_and_the_port_by_the_api(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    open_page(page, "/settings?tab=profiles&new=1")
    form = page.locator("form.profile-form")
    name = form.locator("input[name=name]")
    name.fill("My-Cluster")
    # the pattern compiles in Chromium (v flag): the browser itself finds the name invalid, before any request
    assert name.evaluate("el => el.validity.patternMismatch") is True
    words = field_error(page, "input[name=name]")
    assert "lowercase letters, digits, '.', '-' or '_'" in words
    name.fill("my-cluster.2")
    assert name.evaluate("el => el.validity.valid") is True
    expect(form.locator(".field-error")).to_have_count(0)

    form.locator("input[name=hostname]").fill("login.example")
    form.locator("input[name=port]").fill("0")
    form.locator("button[type=submit]").click()
    port = field_error(page, "input[name=port]")
    assert port == "Must be at least 1"
    assert "my-cluster.2" not in svc_server.api("GET", "/api/config/ssh/profiles")["profiles"]


def test_submit_form_says_a_bad_time_limit_next_to_it_as_one_types(page: Page) -> None:
    open_page(page, "/submit")
    page.fill("textarea[name=command]", "echo hi")
    page.fill("input[name=time_limit]", "forever")
    words = field_error(page, "input[name=time_limit]")  # the preview's 422, from the API's own check
    assert words.startswith("Must look like 30, 4:00:00 or 1-00:00:00")
    assert_words(words)
    page.fill("input[name=time_limit]", "1:00:00")
    page.locator("#script-preview", has_text="--time=1:00:00").wait_for()
    assert page.locator(".field-error").count() == 0


def test_a_logged_out_first_load_logs_no_console_error(anonymous_page: Page) -> None:
    page = anonymous_page
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("requestfailed", lambda request: problems.append(f"failed {request.url}"))
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    for path in ("/", "/jobs/12345?cluster=local&log=stderr"):
        page.goto(path)
        page.wait_for_selector("#login-token")
        page.wait_for_load_state("networkidle")
    assert problems == []
