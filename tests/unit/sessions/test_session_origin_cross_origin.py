"""A page of another origin cannot drive a session: the session's cookie is SameSite=Lax, which browsers send from
every port of the same host, so the sessions' origin refuses state changes and WebSockets whose ``Origin`` is not
its own (403 in words); reads, its own pages' requests and non-browser clients pass."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.datastructures import Headers

from svc_host.api.security import ServerSecurity
from svc_host.sessions.entry import CookieSigner
from svc_host.sessions.origin import COOKIE_LIFETIME, SessionsOrigin, same_origin
from svc_host.sessions.target import SessionTarget
from svc_host.transports.streams import ByteReader, ByteWriter

KEY = b"x" * 32
NOW = 1_800_000_000.0
HOST = "127.0.0.1:8001"


async def nowhere() -> tuple[ByteReader, ByteWriter]:
    raise OSError("Connection refused")


async def resolve(cluster: str, job_id: str) -> SessionTarget | None:
    return SessionTarget(nowhere, "s", {}, "node1:4000")


@pytest.fixture
async def browser() -> AsyncIterator[httpx.AsyncClient]:
    origin = SessionsOrigin(resolve, key=KEY, host_allowed=ServerSecurity(token=None).host_allowed, clock=lambda: NOW)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=origin), base_url=f"http://{HOST}") as client:
        client.cookies.set("svc_s_lab_12", CookieSigner(KEY).sign("lab", "12", int(NOW) + COOKIE_LIFETIME))
        yield client


async def test_a_change_from_another_port_is_refused_in_words(browser: httpx.AsyncClient) -> None:
    refused = await browser.post("/s/lab/12/api/kernels", headers={"Origin": "http://127.0.0.1:9999"})
    assert refused.status_code == 403
    assert "another origin" in refused.text


@pytest.mark.parametrize(
    ("method", "origin"),
    [("POST", f"http://{HOST}"), ("POST", None), ("GET", "http://127.0.0.1:9999"), ("DELETE", f"http://{HOST}/")],
)
async def test_reads_its_own_pages_and_clients_without_origin_reach_the_app(
    browser: httpx.AsyncClient, method: str, origin: str | None
) -> None:
    headers = {"Origin": origin} if origin else {}
    answer = await browser.request(method, "/s/lab/12/api/kernels", headers=headers)
    assert answer.status_code == 502  # let in: the (absent) app is what fails
    assert "Connection refused" in answer.text


def test_a_websocket_from_another_origin_is_not_let_in() -> None:
    def headers(origin: str) -> Headers:
        return Headers(raw=[(b"host", HOST.encode()), (b"origin", origin.encode())])

    websocket = {"type": "websocket", "path": "/s/lab/12/api/kernels/k/channels"}
    assert same_origin(websocket, headers(f"http://{HOST}")) is True
    assert same_origin(websocket, headers("http://127.0.0.1:9999")) is False
    assert same_origin(websocket, headers("https://evil.example")) is False
