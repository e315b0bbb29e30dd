"""``GET /api/plugins`` and the OpenAPI docs."""

from __future__ import annotations

import httpx


async def test_plugins_endpoint_shows_plugins_and_transports(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.get("/api/plugins")
    assert response.status_code == 200
    body = response.json()
    names = {row["name"]: row for row in body["plugins"]}
    assert names["svc_host.api.hooks"]["hooks"] == ["svc_api_routers"]
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


# The status codes rest-api.md gives each configuration and profile route (besides 200).
SPEC_ERRORS = {
    ("put", "/api/config"): {422, 500},
    ("post", "/api/config/reset"): {500},
    ("get", "/api/config/projects/{mount_name}"): {400, 404},
    ("put", "/api/config/projects/{mount_name}"): {400, 404, 422, 500},
    ("post", "/api/config/projects/{mount_name}/init"): {400, 404, 409, 500},
    ("post", "/api/config/ssh/profiles"): {409, 500},
    ("put", "/api/config/ssh/profiles/{name}"): {404, 500},
    ("delete", "/api/config/ssh/profiles/{name}"): {404, 500},
    ("post", "/api/config/ssh/profiles/{name}/activate"): {404, 500},
    ("post", "/api/config/ssh/profiles/{name}/mounts"): {404, 422, 500},
    ("delete", "/api/config/ssh/profiles/{name}/mounts/{mount_name}"): {404, 500},
}


async def test_config_and_profile_routes_declare_their_spec_errors_with_a_detail_body(
    svc_api_client: httpx.AsyncClient,
) -> None:
    paths = (await svc_api_client.get("/openapi.json")).json()["paths"]
    for (method, path), statuses in SPEC_ERRORS.items():
        responses = paths[path][method]["responses"]
        declared = {int(status) for status in responses if status != "200"}
        assert statuses <= declared, (method, path, declared)
        for status in statuses - {422}:  # FastAPI's own 422 schema stays for request validation
            assert responses[str(status)]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorBody"
            }, (method, path, status)
