"""The dashboard's API answers its own pages only: a page of an interactive session (served on the next port, the
same site, so the browser sends the dashboard's cookie along) cannot read the user's jobs with that login."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from svc_host.api.app import create_app
from svc_host.api.security import ServerSecurity
from svc_host.host import Host
from svc_host.testing.http import TEST_API_TOKEN

DASHBOARD = "http://127.0.0.1:8000"
SESSIONS = "http://127.0.0.1:8001"


@pytest.fixture
async def logged_in(svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    """A browser logged in to the dashboard (its session cookie set)."""
    app = create_app(svc_test_host, security=ServerSecurity(token=TEST_API_TOKEN))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=DASHBOARD) as client:
        assert (await client.post("/api/auth/login", json={"token": TEST_API_TOKEN})).status_code == 204
        yield client


async def test_a_session_page_reading_the_api_with_the_dashboards_cookie_is_refused(
    logged_in: httpx.AsyncClient,
) -> None:
    # the dashboard's own pages (a same-origin GET may carry no Origin); /api/plugins answers without a started Host
    assert (await logged_in.get("/api/plugins")).status_code == 200
    own = await logged_in.get("/api/plugins", headers={"Origin": DASHBOARD, "Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 200

    fetched = await logged_in.get("/api/jobs", headers={"Origin": SESSIONS, "Sec-Fetch-Site": "same-site"})
    assert fetched.status_code == 403
    assert SESSIONS in fetched.json()["detail"]
    loaded = await logged_in.get("/api/jobs", headers={"Sec-Fetch-Site": "same-site"})  # <script src=...>
    assert loaded.status_code == 403
    assert "another origin" in loaded.json()["detail"]


async def test_the_token_still_works_from_anywhere(svc_test_host: Host) -> None:
    """A program with the token is no browser page riding on a login: its Origin does not matter."""
    app = create_app(svc_test_host, security=ServerSecurity(token=TEST_API_TOKEN))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=DASHBOARD) as client:
        headers = {"Authorization": f"Bearer {TEST_API_TOKEN}", "Origin": SESSIONS}
        assert (await client.get("/api/plugins", headers=headers)).status_code == 200
