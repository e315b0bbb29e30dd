"""``GET /api/limits`` on the dev cluster: the user's limits with what each counts, and bad profiles refused."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("local_transport")]


async def test_the_limits_of_the_servers_transport_count_the_queue(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.get("/api/limits")
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["transport"], body["user"], body["cluster"], body["default_qos"]) == (
        "local",
        "root",
        "svcdev",
        "normal",
    )
    assert (body["max_array_size"], body["max_job_count"], body["waiting_submissions"]) == (1001, 10000, 0)
    cluster_wide = [item for item in body["submit_limits"] if item["name"] == "MaxJobCount"]
    assert cluster_wide == [
        {"name": "MaxJobCount", "scope": "the cluster", "value": 10000, "in_queue": body["in_queue"]["cluster"]}
    ]
    assert body["in_queue"]["cluster"] >= body["in_queue"]["user"] >= 0
    assert (await svc_api_client.get("/api/limits?profile=local")).json()["user"] == "root"


async def test_an_unknown_profile_is_404_with_the_choices(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.get("/api/limits", params={"profile": "nope"})
    assert (response.status_code, response.json()) == (
        404,
        {"detail": "no transport or SSH profile named 'nope'; choose one of: local"},
    )
    assert (await svc_api_client.get("/api/limits", params={"profile": "x" * 201})).status_code == 422
