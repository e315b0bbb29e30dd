"""POST /api/sessions/{job_id}/link: a ready session gets a one-time URL on the sessions' origin (this server's
name, the sessions port, the kind's open path); a session not ready is 409, a server without a sessions port 503,
an unknown session 404, all in words. The code in the URL is good once at the origin."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from svc_host.api.app import create_app
from svc_host.api.security import ServerSecurity
from svc_host.host import Host
from svc_host.sessions.origin import SessionsOrigin
from svc_host.store import sessions as repo
from svc_host.testing.http import asgi_client, security_for_tests

from .conftest import FileTransport

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


async def a_session(host: Host, state: str) -> None:
    await host.store.run(
        repo.add_session,
        cluster="fake",
        job_id="42",
        kind="web",
        fields="{}",
        source="web",
        session_dir="/home/u/.svc/sessions/x",
        start_timeout_seconds=60,
        now=NOW,
    )
    if state != "queued":
        await host.store.run(repo.move, "fake", "42", expected="queued", changes={"state": state}, now=NOW)


Entry = tuple[SessionsOrigin, httpx.AsyncClient]


@pytest.fixture
async def origin_and_client(svc_test_host: Host, fake: FileTransport, web_kind: None) -> AsyncIterator[Entry]:
    """The API app with a sessions' origin beside it (as ``svc serve`` makes them), and a client of the API."""
    app = create_app(svc_test_host, security=security_for_tests())
    allowed = ServerSecurity(token=None).host_allowed
    origin = SessionsOrigin(app.state.resolve_session, key=b"k" * 32, host_allowed=allowed)
    app.state.sessions_origin, app.state.sessions_port = origin, 8766
    async with asgi_client(app) as client:
        yield origin, client


async def test_a_ready_session_gets_a_one_time_url_on_the_sessions_port(
    svc_test_host: Host, origin_and_client: Entry
) -> None:
    origin, client = origin_and_client
    await a_session(svc_test_host, "ready")
    answer = await client.post("/api/sessions/42/link", params={"transport": "fake"})
    assert answer.status_code == 200, answer.text
    url = urlsplit(answer.json()["url"])
    assert (url.scheme, url.port, url.path) == ("http", 8766, "/s/fake/42/")
    code = parse_qs(url.query)["svc_code"][0]
    assert origin.codes.redeem(code) == ("fake", "42")
    assert origin.codes.redeem(code) is None  # once


@pytest.mark.parametrize("state", ["queued", "starting"])
async def test_a_session_not_ready_is_409_in_words(svc_test_host: Host, origin_and_client: Entry, state: str) -> None:
    await a_session(svc_test_host, state)
    answer = await origin_and_client[1].post("/api/sessions/42/link", params={"transport": "fake"})
    assert answer.status_code == 409
    assert answer.json() == {"detail": f"session 42 on 'fake' is {state}: only a ready session opens"}


async def test_an_unknown_session_is_404(origin_and_client: Entry) -> None:
    answer = await origin_and_client[1].post("/api/sessions/43/link", params={"transport": "fake"})
    assert answer.status_code == 404
    assert answer.json() == {"detail": "no session 43 on transport 'fake'"}


async def test_without_a_sessions_port_the_link_is_503_in_words(
    svc_test_host: Host, svc_api_client: httpx.AsyncClient, fake: FileTransport, web_kind: None
) -> None:
    await a_session(svc_test_host, "ready")
    answer = await svc_api_client.post("/api/sessions/42/link", params={"transport": "fake"})
    assert answer.status_code == 503
    assert "interactive sessions are off on this server" in answer.json()["detail"]
