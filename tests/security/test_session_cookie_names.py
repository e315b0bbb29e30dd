"""The dashboard's session cookie is this server's alone (issue 26, item 2): its name carries the port, under HTTPS
it is ``__Host-`` (``Secure``, ``Path=/``, no ``Domain``), and a server accepts only its own name, so a session
opened over plain http is void under the HTTPS name and the other way round. The sessions' origin uses names of its
own (``svc_s_*``), never the dashboard's, and the proxy keeps both kinds from a session's app.

Before: under HTTPS the cookie was ``svc_session_<port>`` with ``Secure`` only, a name plain http pages of the same
host could overwrite, and the proxy's filter (``svc_*``) would not have known a ``__Host-`` name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import given
from hypothesis import strategies as st

from svc_host.api.app import create_app
from svc_host.api.security import ServerSecurity
from svc_host.api.sessions import cookie_name
from svc_host.host import Host
from svc_host.sessions import entry
from svc_host.sessions.proxy_headers import without_own_cookies
from svc_host.testing.http import TEST_API_TOKEN

HTTPS_NAME = "__Host-svc_session_8443"


@pytest.fixture
async def app(svc_test_host: Host) -> FastAPI:
    security = ServerSecurity(token=TEST_API_TOKEN, allowed_hosts=frozenset({"svc.example.org"}))
    return create_app(svc_test_host, security=security)


def client(app: FastAPI, base: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=("127.0.0.1", 50000)), base_url=base)


@pytest.fixture
async def https(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with client(app, "https://127.0.0.1:8443") as browser:
        yield browser


def attributes(set_cookie: str) -> dict[str, str]:
    """``Set-Cookie``'s attributes by lower-case name (flags map to '')."""
    _, *parts = set_cookie.split(";")
    pairs = (part.strip().partition("=") for part in parts)
    return {name.lower(): value for name, _, value in pairs}


async def test_over_https_the_cookie_is_host_only_secure_and_named_for_this_port(https: httpx.AsyncClient) -> None:
    response = await https.post("/api/auth/login", json={"token": TEST_API_TOKEN})
    assert response.status_code == 204
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{HTTPS_NAME}=")
    assert {"secure", "httponly"} <= attributes(cookie).keys()
    assert attributes(cookie)["path"] == "/"
    assert "domain" not in attributes(cookie)
    assert (await https.get("/api/auth/session")).json() == {"logged_in": True}
    logout = await https.post("/api/auth/logout")
    assert logout.headers["set-cookie"].startswith(f'{HTTPS_NAME}=""')
    assert "secure" in attributes(logout.headers["set-cookie"])  # a browser ignores a __Host- deletion without it


async def test_a_login_link_over_https_sets_the_host_only_cookie(app: FastAPI, https: httpx.AsyncClient) -> None:
    landing = await https.get(f"/jobs?login_code={app.state.sessions.new_code()}")
    assert landing.status_code == 303
    assert landing.headers["set-cookie"].startswith(f"{HTTPS_NAME}=")
    assert "secure" in attributes(landing.headers["set-cookie"])


async def test_a_server_accepts_only_its_own_cookie_name(app: FastAPI, https: httpx.AsyncClient) -> None:
    """The same session id under another name (the plain http one, another port's, a look-alike) logs nobody in,
    and a session opened over plain http is not valid under the HTTPS name."""
    session_id = (await https.post("/api/auth/login", json={"token": TEST_API_TOKEN})).cookies[HTTPS_NAME]
    https.cookies.clear()
    for name in ("svc_session_8443", "__Host-svc_session_8000", "__Secure-svc_session_8443", "svc_session"):
        answer = await https.get("/api/plugins", headers={"Cookie": f"{name}={session_id}"})
        assert answer.status_code == 401, name
    assert (await https.get("/api/plugins", headers={"Cookie": f"{HTTPS_NAME}={session_id}"})).status_code == 200
    async with client(app, "http://127.0.0.1:8443") as plain:
        plain_id = (await plain.post("/api/auth/login", json={"token": TEST_API_TOKEN})).cookies["svc_session_8443"]
        assert (await plain.get("/api/plugins", headers={"Cookie": f"{HTTPS_NAME}={session_id}"})).status_code == 401
    assert (await https.get("/api/plugins", headers={"Cookie": f"{HTTPS_NAME}={plain_id}"})).status_code == 401


async def test_behind_a_proxy_without_a_port_the_name_is_still_host_only(app: FastAPI) -> None:
    async with client(app, "https://svc.example.org") as proxied:
        response = await proxied.post("/api/auth/login", json={"token": TEST_API_TOKEN})
    assert response.headers["set-cookie"].startswith("__Host-svc_session=")


@given(
    cluster=st.from_regex(r"[a-z][a-z0-9_-]{0,30}", fullmatch=True),
    job_id=st.from_regex(r"[0-9]{1,10}(_[0-9]{1,5})?", fullmatch=True),
    port=st.integers(min_value=1, max_value=65535),
    https=st.booleans(),
)
def test_the_sessions_origins_cookies_never_take_the_dashboards_name(
    cluster: str, job_id: str, port: int, https: bool
) -> None:
    """The dashboard ignores an origin's cookie, the origin a dashboard's, and the proxy drops both."""
    dashboard = cookie_name(f"127.0.0.1:{port}", https=https)
    origin = entry.cookie_name(cluster, job_id)
    assert origin != dashboard
    assert without_own_cookies(f"{dashboard}=a; {origin}=b; theirs=c".encode()) == b"theirs=c"
