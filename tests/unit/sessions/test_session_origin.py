"""The sessions' origin's own answers (entry, cookie life, refusals), before any app is reached."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from svc_host.api.security import ServerSecurity
from svc_host.sessions.entry import CookieSigner
from svc_host.sessions.origin import COOKIE_LIFETIME, SessionsOrigin
from svc_host.sessions.target import SessionTarget
from svc_host.transports.streams import ByteReader, ByteWriter

KEY = b"o" * 32
NOW = 1_800_000_000.0


async def nowhere() -> tuple[ByteReader, ByteWriter]:
    raise OSError("Connection refused")


async def resolve(cluster: str, job_id: str) -> SessionTarget | None:
    return SessionTarget(nowhere, "s", {}, "node1:4000") if job_id == "12" else None


@pytest.fixture
async def browser() -> AsyncIterator[tuple[httpx.AsyncClient, SessionsOrigin]]:
    origin = SessionsOrigin(resolve, key=KEY, host_allowed=ServerSecurity(token=None).host_allowed, clock=lambda: NOW)
    transport = httpx.ASGITransport(app=origin)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8001") as client:
        yield client, origin


async def test_the_base_path_gets_its_slash_and_a_code_its_cookie(
    browser: tuple[httpx.AsyncClient, SessionsOrigin],
) -> None:
    client, origin = browser
    bare = await client.get("/s/lab/12?tab=1")
    assert (bare.status_code, bare.headers["location"]) == (303, "/s/lab/12/?tab=1")
    assert "set-cookie" not in bare.headers
    entered = await client.get(f"/s/lab/12?svc_code={origin.mint_code('lab', '12')}&tab=1")
    assert (entered.status_code, entered.headers["location"]) == (303, "/s/lab/12/?tab=1")
    assert f"Max-Age={COOKIE_LIFETIME}" in entered.headers["set-cookie"]


async def test_an_app_not_there_is_502_and_a_session_not_known_is_404(
    browser: tuple[httpx.AsyncClient, SessionsOrigin],
) -> None:
    client, _ = browser
    signer = CookieSigner(KEY)
    client.cookies.set("svc_s_lab_12", signer.sign("lab", "12", int(NOW) + COOKIE_LIFETIME))
    gone = await client.get("/s/lab/12/lab")
    assert gone.status_code == 502
    assert "Connection refused" in gone.text
    client.cookies.set("svc_s_lab_13", signer.sign("lab", "13", int(NOW) + 60))
    unknown = await client.get("/s/lab/13/")
    assert unknown.status_code == 404
    assert "not running" in unknown.text


async def test_a_cookie_past_half_its_life_is_renewed_and_an_expired_one_refused(
    browser: tuple[httpx.AsyncClient, SessionsOrigin],
) -> None:
    client, _ = browser
    signer = CookieSigner(KEY)
    client.cookies.set("svc_s_lab_12", signer.sign("lab", "12", int(NOW) + 60))
    renewed = await client.get("/s/lab/12/")
    assert renewed.headers["set-cookie"].startswith(f"svc_s_lab_12={int(NOW) + COOKIE_LIFETIME}.")
    client.cookies.set("svc_s_lab_12", signer.sign("lab", "12", int(NOW) - 1))
    assert (await client.get("/s/lab/12/")).status_code == 401


async def test_another_host_name_or_path_is_refused_in_words(browser: tuple[httpx.AsyncClient, SessionsOrigin]) -> None:
    client, _ = browser
    assert (await client.get("/s/lab/12/", headers={"Host": "rebound.example"})).status_code == 400
    nothing = await client.get("/api/jobs")
    assert nothing.status_code == 404
    assert "/s/&lt;cluster&gt;/&lt;job id&gt;/" in nothing.text
