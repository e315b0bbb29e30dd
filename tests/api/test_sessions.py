"""The dashboard's sessions as a browser and a neighbour on another port meet them: the cookie holds a session id,
never the token; logging out, a new token and time end it; a login link's code works once; failed logins slow
wrong guesses but never lock out the right token. Runs on SQLite and on PostgreSQL (several ``svc serve`` on one
store share sessions)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from svc_host.api.app import create_app
from svc_host.api.security import ServerSecurity
from svc_host.api.sessions import (
    CODE_LIFETIME,
    FAILURE_WINDOW,
    MAX_FAILURES,
    SESSION_LIFETIME,
    SESSION_RECHECK,
    WebSessions,
)
from svc_host.host import Host
from svc_host.testing.http import TEST_API_TOKEN

TOKEN = TEST_API_TOKEN
COOKIE = "svc_session_8000"


@pytest.fixture
def svc_database_url(database_url: str) -> str:
    """This module runs on SQLite and on PostgreSQL."""
    return database_url


def server(host: Host, token: str = TOKEN) -> FastAPI:
    return create_app(host, security=ServerSecurity(token=token))


def browser(app: FastAPI, client: str = "127.0.0.1") -> httpx.AsyncClient:
    """A client that keeps cookies, as a browser on the machine ``client`` does."""
    transport = httpx.ASGITransport(app=app, client=(client, 50000))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000")


def sessions_of(app: FastAPI) -> WebSessions:
    sessions: WebSessions = app.state.sessions
    return sessions


@pytest.fixture
async def app(svc_test_host: Host) -> FastAPI:
    return server(svc_test_host)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with browser(app) as client:
        yield client


async def log_in(http: httpx.AsyncClient) -> str:
    """Log in with the form's token; returns the cookie's value."""
    response = await http.post("/api/auth/login", json={"token": TOKEN})
    assert response.status_code == 204
    return response.cookies[COOKIE]


async def test_the_cookie_holds_a_session_id_never_the_token(http: httpx.AsyncClient) -> None:
    response = await http.post("/api/auth/login", json={"token": TOKEN})
    cookie = response.headers["set-cookie"]
    assert TOKEN not in cookie
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie
    assert f"Max-Age={SESSION_LIFETIME}" in cookie
    assert len(response.cookies[COOKIE]) >= 40  # 256 random bits
    assert (await http.get("/api/plugins")).status_code == 200


async def test_logout_ends_the_session_for_whoever_copied_the_cookie(http: httpx.AsyncClient, app: FastAPI) -> None:
    session_id = await log_in(http)
    async with browser(app, "127.0.0.9") as neighbour:  # a page on another port read the cookie
        stolen = {"Cookie": f"{COOKIE}={session_id}"}
        assert (await neighbour.get("/api/plugins", headers=stolen)).status_code == 200
        logout = await http.post("/api/auth/logout")
        assert logout.status_code == 204
        assert f'{COOKIE}=""' in logout.headers["set-cookie"]
        assert (await http.get("/api/plugins")).status_code == 401
        assert (await neighbour.get("/api/plugins", headers=stolen)).status_code == 401


async def test_a_logout_through_another_server_of_the_store_reaches_this_one_within_seconds(
    http: httpx.AsyncClient, svc_test_host: Host
) -> None:
    """Each server trusts a session its store confirmed for ``SESSION_RECHECK`` seconds (docs/security.md)."""
    stolen = {"Cookie": f"{COOKIE}={await log_in(http)}"}
    other = server(svc_test_host)
    async with browser(other, "127.0.0.9") as neighbour:
        assert (await neighbour.get("/api/plugins", headers=stolen)).status_code == 200
        assert (await http.post("/api/auth/logout")).status_code == 204
        assert (await http.get("/api/plugins", headers=stolen)).status_code == 401  # this server: at once
        confirmed = sessions_of(other).clock()
        sessions_of(other).clock = lambda: confirmed + SESSION_RECHECK
        assert (await neighbour.get("/api/plugins", headers=stolen)).status_code == 401


async def test_a_session_is_bound_to_the_port_whose_cookie_carried_it(http: httpx.AsyncClient) -> None:
    session_id = await log_in(http)
    other_port = {"Host": "127.0.0.1:9999"}
    assert (
        await http.get("/api/plugins", headers={**other_port, "Cookie": f"svc_session_9999={session_id}"})
    ).status_code == 401
    assert (
        await http.get("/api/plugins", headers={**other_port, "Cookie": f"{COOKIE}={session_id}"})
    ).status_code == 401
    assert (await http.get("/api/plugins", headers={"Cookie": f"{COOKIE}={TOKEN}"})).status_code == 401


async def test_sessions_outlive_a_restart_and_die_with_the_token(http: httpx.AsyncClient, svc_test_host: Host) -> None:
    stolen = {"Cookie": f"{COOKIE}={await log_in(http)}"}
    async with browser(server(svc_test_host)) as restarted:
        assert (await restarted.get("/api/plugins", headers=stolen)).status_code == 200
    async with browser(server(svc_test_host, token="a-brand-new-token-after-rotation")) as rotated:
        assert (await rotated.get("/api/plugins", headers=stolen)).status_code == 401


async def test_a_session_expires(http: httpx.AsyncClient, app: FastAPI) -> None:
    await log_in(http)
    sessions = sessions_of(app)
    started = sessions.clock()
    sessions.clock = lambda: started + SESSION_LIFETIME + 1
    assert (await http.get("/api/plugins")).status_code == 401


async def test_a_login_code_logs_in_one_browser_once(app: FastAPI) -> None:
    code = sessions_of(app).new_code()
    async with browser(app) as first, browser(app) as second:
        landing = await first.get(f"/jobs/42?tab=log&login_code={code}")
        assert landing.status_code == 303
        assert landing.headers["location"] == "/jobs/42?tab=log"
        assert landing.headers["cache-control"] == "no-store"
        assert TOKEN not in landing.headers["set-cookie"]
        assert (await first.get("/api/plugins")).status_code == 200
        again = await second.get(f"/?login_code={code}")
        assert again.headers["location"] == "/?login=failed"
        assert "set-cookie" not in again.headers
        assert (await second.get("/api/plugins")).status_code == 401


async def test_a_login_code_expires_in_minutes(app: FastAPI, http: httpx.AsyncClient) -> None:
    sessions = sessions_of(app)
    code = sessions.new_code()
    minted = sessions.clock()
    sessions.clock = lambda: minted + CODE_LIFETIME + 1
    assert (await http.get(f"/?login_code={code}")).headers["location"] == "/?login=failed"
    assert (await http.get("/api/plugins")).status_code == 401


async def test_a_link_with_the_token_itself_logs_nobody_in(http: httpx.AsyncClient) -> None:
    """Such a link (printed by versions before login codes) would keep the token in the browser's history."""
    response = await http.get(f"/jobs?token={TOKEN}")
    assert response.status_code == 303
    assert response.headers["location"] == "/jobs?login=failed"
    assert "set-cookie" not in response.headers


async def test_failed_logins_slow_wrong_guesses_but_never_lock_out(app: FastAPI, http: httpx.AsyncClient) -> None:
    """The limit counts the server's failures, whoever sent them (every local user is 127.0.0.1), and never
    refuses the right token or a live login code (issue 26, N15)."""
    limit = sessions_of(app).limit
    now = 1000.0
    limit.clock = lambda: now
    for _ in range(MAX_FAILURES):
        assert (await http.post("/api/auth/login", json={"token": "a-wrong-guess-0123"})).status_code == 401
    async with browser(app, "127.0.0.7") as someone_else:
        limited = await someone_else.post("/api/auth/login", json={"token": "a-wrong-guess-0123"})
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == str(int(FAILURE_WINDOW))
    assert "too many failed logins" in limited.json()["detail"]
    assert (await http.post("/api/auth/login", json={"token": TOKEN})).status_code == 204
    code = sessions_of(app).new_code()
    async with browser(app) as owner:
        assert (await owner.get(f"/?login_code={code}")).status_code == 303
        assert (await owner.get("/api/auth/session")).json() == {"logged_in": True}
    now += FAILURE_WINDOW
    assert (await http.post("/api/auth/login", json={"token": "a-wrong-guess-0123"})).status_code == 401


async def test_guessing_login_codes_is_limited(http: httpx.AsyncClient) -> None:
    for attempt in range(MAX_FAILURES):
        assert (await http.get(f"/?login_code=guess-{attempt}")).headers["location"] == "/?login=failed"
    assert (await http.get("/?login_code=guess-again")).status_code == 429
