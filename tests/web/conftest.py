"""The dashboard in a real browser: Debian's Chromium driven by Playwright against a real ``svc serve``.

One server per session (its own HOME and XDG dirs, ``SVC_API_TOKEN`` set, the local transport on the dev
cluster) and one browser; each test gets a fresh, logged-in page. Under ``CI=true`` a missing Chromium or
cluster fails the tests instead of skipping them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from svc_host.testing.plugin import skip_or_fail
from svc_host.testing.serve import isolated_env, start_serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "web-test-token-0123456789abcdef"
VIEWPORT = {"width": 1280, "height": 800}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every browser test needs the dev cluster and Chromium: mark them all ``cluster``."""
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.cluster)


class Server:
    """A running ``svc serve``: its base URL, environment, token and an API client that sends the token."""

    def __init__(self, base: str, env: dict[str, str], process: subprocess.Popen[str], log: Path) -> None:
        self.base = base
        self.env = env
        self.home = Path(env["HOME"])
        self.process = process
        self.log = log
        self.client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.request(method, path, **kwargs)
        if response.is_error:  # the answer and the server's log say why (the log outlives no test run)
            tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])
            message = f"{method} {path}: {response.status_code} {response.text}\nserve.log:\n{tail}"
            raise httpx.HTTPStatusError(message, request=response.request, response=response)
        return response.json() if response.content else None

    def login_link(self) -> str:
        """A new one-time login link, from ``svc login-link`` run as the server's user."""
        done = subprocess.run(
            [sys.executable, "-m", "svc_host", "login-link", "--url", f"{self.base}/"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout.strip()


def add_dev_profile(server: Server, dev_env: dict[str, str], name: str, **extra: str) -> None:
    """Create SSH profile ``name`` for the dev cluster's loopback sshd through the API (as the Settings page does)."""
    body = {
        "name": name,
        "hostname": dev_env["SVC_DEV_SSH_HOST"],
        "port": int(dev_env["SVC_DEV_SSH_PORT"]),
        "username": dev_env["SVC_DEV_SSH_USER"],
        "key_filename": dev_env["SVC_DEV_SSH_KEY"],
        "known_hosts": dev_env["SVC_DEV_SSH_KNOWN_HOSTS"],
        **extra,
    }
    server.api("POST", "/api/config/ssh/profiles", json=body)


@pytest.fixture(scope="session")
def svc_server(slurm_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``svc serve`` as a user runs it, on a free loopback port, with a home of its own."""
    root = tmp_path_factory.mktemp("web-server")
    work = root / "work"
    work.mkdir()
    env = isolated_env(root, token=TOKEN)
    with (root / "serve.log").open("w") as log:
        try:
            running = start_serve(base_env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        except RuntimeError as exc:
            raise AssertionError(f"{exc}: {(root / 'serve.log').read_text()}") from None
        server = Server(running.base, env, running.process, root / "serve.log")
        try:
            yield server
        finally:
            server.client.close()
            running.stop()


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread while it is
# open, and async tests that run after the browser tests (pytest-asyncio) need the thread free of one.
@pytest.fixture(scope="module")
def playwright_instance() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        skip_or_fail(f"Chromium is not installed at {CHROMIUM} (scripts/browser installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="module")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    browser = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    yield browser
    browser.close()


@pytest.fixture
def anonymous_page(browser: Browser, svc_server: Server) -> Iterator[Page]:
    """A page in a fresh browser context: no cookie, not logged in."""
    # bypass_csp: the page's CSP forbids eval, which Playwright's wait_for_function uses; the app is unchanged
    context = browser.new_context(viewport=VIEWPORT, base_url=svc_server.base, bypass_csp=True)
    context.set_default_timeout(30_000)  # generous: make test runs these beside other tests on 2 cores
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture
def page(anonymous_page: Page, svc_server: Server) -> Page:
    """A logged-in page: the token posted once to ``/api/auth/login``, as the login form does (the link's one-time
    codes are tested in test_login.py), then the dashboard opened."""
    log_in(anonymous_page)
    return anonymous_page


def log_in(page: Page) -> None:
    """Post the token to ``/api/auth/login`` as the login form does, then open the dashboard."""
    login = page.request.post("/api/auth/login", data={"token": TOKEN})
    assert login.status == 204, login.text()
    page.goto("/")
    page.wait_for_selector(".page[data-ready=true]")


def open_page(page: Page, path: str) -> None:
    """Go to a dashboard path and wait until its page has drawn with its data."""
    page.goto(path)
    page.wait_for_selector(".page[data-ready=true]")


def shot(page: Page, name: str) -> None:
    """Save ``docs/screenshots/<name>-light.png`` and ``-dark.png`` (1280x800) of the page as it is."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for theme in ("light", "dark"):
        if page.evaluate("document.documentElement.dataset.theme") != theme:
            page.dispatch_event("#theme-toggle", "click")  # the same toggle a person uses, under a modal dialog too
        page.wait_for_timeout(200)
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{theme}.png"))


@pytest.fixture
def screenshot() -> Callable[[Page, str], None]:
    return shot
