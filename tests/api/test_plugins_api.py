"""``GET /api/plugins`` and the OpenAPI docs."""

from __future__ import annotations

import httpx

from svc_host.api.app import create_app
from svc_host.plugins import create_plugin_manager


async def client() -> httpx.AsyncClient:
    app = create_app(create_plugin_manager(strict=True))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://svc.test")


async def test_plugins_endpoint_shows_plugins_and_transports() -> None:
    async with await client() as http:
        response = await http.get("/api/plugins")
    assert response.status_code == 200
    body = response.json()
    names = {row["name"]: row for row in body["plugins"]}
    assert {"local", "ssh", "rsync"} <= set(names)
    assert names["local"]["status"] == "ok"
    assert [t["name"] for t in body["transports"]] == ["local"]
    assert body["transport_error"] is None


async def test_openapi_docs_are_served() -> None:
    async with await client() as http:
        docs = await http.get("/docs")
        schema = await http.get("/openapi.json")
    assert docs.status_code == 200
    assert "/api/plugins" in schema.json()["paths"]


async def test_unknown_path_is_a_json_detail() -> None:
    async with await client() as http:
        response = await http.get("/api/nope")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"}
