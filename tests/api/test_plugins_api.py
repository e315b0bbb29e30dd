"""``GET /api/plugins`` and the OpenAPI docs."""

from __future__ import annotations

import httpx


async def test_plugins_endpoint_shows_plugins_and_transports(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.get("/api/plugins")
    assert response.status_code == 200
    body = response.json()
    names = {row["name"]: row for row in body["plugins"]}
    assert names["svc_host.api.hooks"]["hooks"] == ["svc_api_routers", "svc_event"]
    assert body["transport_error"] is None
    assert body["server_transport"] == "local"


async def test_openapi_docs_are_served(svc_api_client: httpx.AsyncClient) -> None:
    docs = await svc_api_client.get("/docs")
    schema = await svc_api_client.get("/openapi.json")
    assert docs.status_code == 200
    assert {"/api/plugins", "/api/jobs", "/api/jobs/{job_id}", "/api/resources", "/api/history"} <= set(
        schema.json()["paths"]
    )


async def test_unknown_path_is_a_json_detail(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.get("/api/nope")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"}
