"""The HTTP safety layer as an attacker and a browser meet it: Host allow-list, token, Origin, body size,
login link and cookie, the catch-all error body, and what the OpenAPI says about authentication."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace

import httpx
import pytest
from fastapi import APIRouter

from svc_host import hookimpl
from svc_host.api.app import create_app
from svc_host.api.security import ServerSecurity
from svc_host.host import Host
from svc_host.testing.http import TEST_API_TOKEN

TOKEN = TEST_API_TOKEN
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def client_for(host: Host, security: ServerSecurity, **kwargs: object) -> httpx.AsyncClient:
    app = create_app(host, security=security)
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
        base_url="http://127.0.0.1:8000",
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture
async def http(svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    """A client with no credentials of its own, on a server whose token is TOKEN."""
    async with client_for(svc_test_host, ServerSecurity(token=TOKEN, max_body_bytes=64 * 1024)) as client:
        yield client


# --- Host allow-list (DNS rebinding) ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_rebound_host_is_refused_before_any_route(http: httpx.AsyncClient, method: str) -> None:
    response = await http.request(
        method, "/api/config", headers={**AUTH, "Host": "evil.example"}, json={} if method == "POST" else None
    )
    assert response.status_code == 400
    assert "evil.example" in response.json()["detail"]
    assert "--allowed-host" in response.json()["detail"]


@pytest.mark.parametrize("name", ["localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LOCALHOST", "127.0.0.1"])
async def test_loopback_names_are_answered(http: httpx.AsyncClient, name: str) -> None:
    assert (await http.get("/api/plugins", headers={**AUTH, "Host": name})).status_code == 200


@pytest.mark.parametrize("name", ["", "a b", "user@127.0.0.1", "127.0.0.1:99999", "127.0.0.1.evil.example"])
async def test_malformed_or_lookalike_hosts_are_refused(http: httpx.AsyncClient, name: str) -> None:
    assert (await http.get("/api/plugins", headers={**AUTH, "Host": name})).status_code == 400


async def test_a_configured_name_is_answered(svc_test_host: Host) -> None:
    security = ServerSecurity(token=TOKEN, allowed_hosts=frozenset({"Svc.Example.org:443"}))
    async with client_for(svc_test_host, security, headers=AUTH) as http:
        assert (await http.get("/api/plugins", headers={"Host": "svc.example.org"})).status_code == 200
        assert (await http.get("/api/plugins", headers={"Host": "other.example.org"})).status_code == 400


# --- token -----------------------------------------------------------------------------------------


async def test_api_without_token_is_401_and_says_how(http: httpx.AsyncClient) -> None:
    response = await http.get("/api/config")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in response.json()["detail"]
    assert (await http.get("/api/config", headers={"Authorization": "Bearer wrong-token-123456"})).status_code == 401
    assert (await http.get("/api/config", headers={"Authorization": f"Basic {TOKEN}"})).status_code == 401


async def test_api_with_bearer_token_works_and_never_echoes_it(http: httpx.AsyncClient) -> None:
    for path in ("/api/config", "/api/config/env", "/api/plugins", "/openapi.json"):
        response = await http.get(path, headers=AUTH)
        assert response.status_code == 200, path
        assert TOKEN not in response.text


async def test_docs_and_schema_need_no_token_and_say_how_to_authenticate(http: httpx.AsyncClient) -> None:
    assert (await http.get("/docs")).status_code == 200
    schema = (await http.get("/openapi.json")).json()
    assert schema["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The token `svc serve` printed, or SVC_API_TOKEN",
    }
    assert "Authorization: Bearer" in schema["info"]["description"]
    jobs = schema["paths"]["/api/jobs"]["get"]
    assert jobs["security"] == [{"bearer": []}]
    assert "401" in jobs["responses"]
    assert "security" not in schema["paths"]["/api/auth/login"]["post"]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_the_api_docs_load_only_this_servers_scripts_under_its_csp(http: httpx.AsyncClient, page: str) -> None:
    response = await http.get(page)
    assert response.status_code == 200
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "script-src" not in csp  # scripts fall back to 'self': no inline script, no other site
    html = response.text
    assert "<script>" not in html
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert sources
    for source in sources:
        assert source.startswith("/"), source
        assert not source.startswith("//"), source
        asset = await http.get(source)
        assert asset.status_code == 200, source
        assert asset.headers["content-type"].split(";")[0] in {"text/javascript", "text/css", "image/svg+xml"}
    assert (await http.get("/docs/assets/..%2Fcore.py")).status_code == 404
    assert (await http.get("/docs/assets/favicon.png")).status_code == 404  # only the files the pages use


async def test_no_auth_mode_still_checks_host(svc_test_host: Host) -> None:
    async with client_for(svc_test_host, ServerSecurity(token=None)) as http:
        assert (await http.get("/api/plugins")).status_code == 200
        assert (await http.get("/api/plugins", headers={"Host": "evil.example"})).status_code == 400


def test_a_short_token_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        ServerSecurity(token="short")


# --- the dashboard's login: link, form, cookie (sessions in depth: test_sessions.py) ---------------------


async def test_login_form_and_logout(http: httpx.AsyncClient) -> None:
    wrong = await http.post("/api/auth/login", json={"token": "not-the-token-at-all"})
    assert wrong.status_code == 401
    assert "wrong token" in wrong.json()["detail"]
    assert (await http.get("/api/plugins")).status_code == 401
    right = await http.post("/api/auth/login", json={"token": TOKEN})
    assert right.status_code == 204
    assert right.content == b""
    assert (await http.get("/api/plugins")).status_code == 200
    assert (await http.post("/api/auth/logout")).status_code == 204
    assert (await http.get("/api/plugins")).status_code == 401


@pytest.mark.parametrize("path", ["//evil.example/", "/\\evil.example/", "///evil.example/x", "//evil.example"])
async def test_a_login_link_redirects_only_within_this_server(http: httpx.AsyncClient, path: str) -> None:
    url = httpx.URL("http://127.0.0.1:8000/").copy_with(raw_path=f"{path}?token=x&tab=log".encode())
    response = await http.get(url)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith("/")
    assert not location.startswith(("//", "/\\"))
    assert httpx.URL("http://127.0.0.1:8000/").join(location).host == "127.0.0.1"
    assert location.endswith("?tab=log&login=failed")


async def test_api_answers_are_never_cached(http: httpx.AsyncClient) -> None:
    for response in (
        await http.get("/api/plugins", headers=AUTH),
        await http.get("/api/config/env", headers=AUTH),
        await http.get("/api/plugins"),  # a refusal too
        await http.post("/api/auth/login", json={"token": TOKEN}),
    ):
        assert response.headers["cache-control"] == "no-store", response.request.url
    assert (await http.get("/static/js/app.js")).headers["cache-control"] == "no-cache"  # revalidated, not no-store


# --- Origin, forged forms, content types --------------------------------------------------------------


async def test_cross_origin_state_changes_are_refused_even_with_the_cookie(http: httpx.AsyncClient) -> None:
    assert (await http.post("/api/auth/login", json={"token": TOKEN})).status_code == 204
    cookie = {"Cookie": f"svc_session_8000={http.cookies['svc_session_8000']}"}
    for path in ("/api/config/reset", "/api/sweep_runs/1/cancel", "/api/config/ssh/profiles/x/activate"):
        forged = await http.post(path, headers={**cookie, "Origin": "http://evil.example"})
        assert forged.status_code == 403, path
        assert "evil.example" in forged.json()["detail"]
    site = await http.post("/api/config/reset", headers={**cookie, "Sec-Fetch-Site": "cross-site"})
    assert site.status_code == 403
    null = await http.post("/api/config/reset", headers={**cookie, "Origin": "null"})
    assert null.status_code == 403


async def test_same_origin_and_configured_origins_may_change_state(svc_test_host: Host) -> None:
    security = ServerSecurity(token=TOKEN, allowed_origins=frozenset({"https://proxy.example/"}))
    async with client_for(svc_test_host, security, headers=AUTH) as http:
        same = await http.post("/api/config/reset", headers={"Origin": "http://127.0.0.1:8000"})
        assert same.status_code == 200
        proxied = await http.post("/api/config/reset", headers={"Origin": "https://proxy.example"})
        assert proxied.status_code == 200


async def test_form_and_plain_text_bodies_are_refused(http: httpx.AsyncClient) -> None:
    for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {**AUTH, **({"Content-Type": content_type} if content_type else {})}
        response = await http.post("/api/jobs", content=b'{"script_content": "#!/bin/sh\\n"}', headers=headers)
        assert response.status_code == 422, content_type
        assert "detail" in response.json()


# --- request size ------------------------------------------------------------------------------------


async def test_a_body_over_the_limit_is_413_before_the_route_reads_it(http: httpx.AsyncClient) -> None:
    big = b'{"content": "' + b"x" * (70 * 1024) + b'"}'
    response = await http.post(
        "/api/workflows/validate", content=big, headers={**AUTH, "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json() == {"detail": "request body larger than 65536 bytes"}

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(70):
            yield b"x" * 1024

    streamed = await http.post("/api/workflows/validate", content=chunks(), headers=AUTH)
    assert streamed.status_code == 413


# --- one error shape -----------------------------------------------------------------------------------


async def test_an_unexpected_exception_is_a_500_detail_without_internals(
    svc_test_host: Host, svc_register_plugin: Callable[..., None]
) -> None:
    router = APIRouter()

    @router.get("/api/boom")
    async def boom() -> None:
        raise RuntimeError("secret detail at /home/someone/.ssh/id_ed25519")

    svc_register_plugin(SimpleNamespace(svc_api_routers=hookimpl(lambda: [router])), "boom")
    async with client_for(svc_test_host, ServerSecurity(token=TOKEN), headers=AUTH) as http:
        response = await http.get("/api/boom")
    assert response.status_code == 500
    assert response.json() == {"detail": "internal server error; the server log has the details"}


async def test_a_plugin_route_outside_api_still_needs_the_token_to_change_state(
    svc_test_host: Host, svc_register_plugin: Callable[..., None]
) -> None:
    router = APIRouter()

    @router.post("/hooks/deploy")
    async def deploy() -> dict[str, bool]:
        return {"deployed": True}

    svc_register_plugin(SimpleNamespace(svc_api_routers=hookimpl(lambda: [router])), "deployer")
    async with client_for(svc_test_host, ServerSecurity(token=TOKEN)) as http:
        assert (await http.post("/hooks/deploy")).status_code == 401
        assert (await http.post("/hooks/deploy", headers=AUTH)).json() == {"deployed": True}
