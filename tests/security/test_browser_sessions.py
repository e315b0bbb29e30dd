"""A browser session against a real ``svc serve`` (issue 26, N14 and N15).

N14: an open ``/api/events`` stream kept delivering after its session was logged out or expired. N15: ten bad
logins from 127.0.0.1 locked the owner out (the right token and a fresh login link were answered 429), while any
client that set ``X-Forwarded-For`` was never limited.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from svc_host.api.app import create_app
from svc_host.api.security import ServerSecurity
from svc_host.api.sessions import MAX_FAILURES, SESSION_LIFETIME, WebSessions
from svc_host.host import Host
from svc_host.testing.live_server import live_server
from svc_host.testing.serve import ServeProcess, isolated_env, running_serve
from svc_host.testing.waiting import DEADLINE

TOKEN = "browser-sessions-test-token-0123456789"
WRONG = "a-wrong-guess-0123456789"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path / "serve", token=TOKEN)


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[ServeProcess]:
    with running_serve(env=env, cwd=tmp_path) as started:
        yield started


def browser(server: ServeProcess) -> httpx.Client:
    return httpx.Client(base_url=server.base, timeout=30)


def log_in(client: httpx.Client) -> None:
    response = client.post("/api/auth/login", json={"token": TOKEN})
    assert response.status_code == 204, response.text
    assert client.cookies, "the login set no session cookie"


def fail_logins(client: httpx.Client, count: int, **headers: str) -> list[int]:
    return [client.post("/api/auth/login", json={"token": WRONG}, headers=headers).status_code for _ in range(count)]


def login_link(server: ServeProcess, env: dict[str, str]) -> str:
    printed = subprocess.run(
        [sys.executable, "-m", "svc_host", "login-link", "--url", f"{server.base}/"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return printed.stdout.strip()


def test_logging_out_ends_an_open_event_stream(server: ServeProcess) -> None:
    with browser(server) as tab, browser(server) as other_tab:
        log_in(tab)
        other_tab.cookies = tab.cookies
        with tab.stream("GET", "/api/events") as stream:
            assert stream.status_code == 200
            lines = stream.iter_lines()
            assert next(lines).startswith("retry:")
            assert other_tab.post("/api/auth/logout").status_code == 204
            deadline = time.monotonic() + DEADLINE
            ended = False
            for _ in lines:
                if time.monotonic() > deadline:
                    break
            else:
                ended = True
            assert ended, f"the stream still delivers {DEADLINE:.0f} s after the logout"
        assert tab.get("/api/events").status_code == 401


def test_failed_logins_never_lock_out_the_right_token(server: ServeProcess) -> None:
    with browser(server) as owner, browser(server) as guesser:
        statuses = fail_logins(guesser, MAX_FAILURES + 2)
        assert statuses[:MAX_FAILURES] == [401] * MAX_FAILURES
        assert statuses[MAX_FAILURES:] == [429, 429], "the guesser is not limited"
        log_in(owner)
        assert owner.get("/api/auth/session").json() == {"logged_in": True}


def test_failed_logins_never_lock_out_a_fresh_login_link(server: ServeProcess, env: dict[str, str]) -> None:
    with browser(server) as owner, browser(server) as guesser:
        fail_logins(guesser, MAX_FAILURES + 1)
        answer = owner.get(login_link(server, env))
        assert answer.status_code == 303, answer.text
        assert "login=failed" not in answer.headers["location"]
        assert owner.get("/api/auth/session").json() == {"logged_in": True}


def test_a_forwarded_address_does_not_escape_the_limit(server: ServeProcess) -> None:
    with browser(server) as guesser:
        statuses = [
            guesser.post("/api/auth/login", json={"token": WRONG}, headers={"X-Forwarded-For": f"10.0.0.{n}"})
            for n in range(MAX_FAILURES + 2)
        ]
        assert [answer.status_code for answer in statuses[MAX_FAILURES:]] == [429, 429]


async def test_a_stream_ends_when_its_session_expires(svc_test_host: Host) -> None:
    """The same server, in process, with the sessions' clock moved past the session's lifetime."""
    app = create_app(svc_test_host, security=ServerSecurity(token=TOKEN))
    sessions: WebSessions = app.state.sessions
    async with live_server(app) as base, httpx.AsyncClient(base_url=base, timeout=30) as tab:
        assert (await tab.post("/api/auth/login", json={"token": TOKEN})).status_code == 204
        async with tab.stream("GET", "/api/events") as stream:
            lines = stream.aiter_lines()
            assert (await anext(lines)).startswith("retry:")
            later = time.time() + SESSION_LIFETIME + 1
            sessions.clock = lambda: later

            async def read_to_the_end() -> None:
                async for _ in lines:
                    pass

            await asyncio.wait_for(read_to_the_end(), DEADLINE)
        assert (await tab.get("/api/events")).status_code == 401


async def test_behind_a_tls_proxy_the_cookie_is_host_only_and_secure(svc_test_host: Host) -> None:
    """uvicorn takes ``X-Forwarded-Proto`` from a proxy on 127.0.0.1 (docs/security.md's nginx setup): the browser
    then gets ``__Host-svc_session_<port>``, ``Secure``, which plain http to the same server does not accept."""
    app = create_app(svc_test_host, security=ServerSecurity(token=TOKEN))
    proxied = {"X-Forwarded-Proto": "https"}
    async with live_server(app) as base, httpx.AsyncClient(base_url=base, timeout=30) as tab:
        name = f"__Host-svc_session_{base.rsplit(':', 1)[1]}"
        login = await tab.post("/api/auth/login", json={"token": TOKEN}, headers=proxied)
        assert login.status_code == 204
        assert login.headers["set-cookie"].startswith(f"{name}=")
        assert "secure" in login.headers["set-cookie"].lower()
        cookie = {"Cookie": f"{name}={login.cookies[name]}"}
        tab.cookies.clear()
        assert (await tab.get("/api/plugins", headers={**proxied, **cookie})).status_code == 200
        assert (await tab.get("/api/plugins", headers=cookie)).status_code == 401
