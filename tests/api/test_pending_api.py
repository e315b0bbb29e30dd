"""REST "why pending" and "would it fit" against the dev cluster: GET /api/jobs/{job_id}/pending, POST
/api/jobs/test (docs/interfaces.md, "Why pending")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("local_transport")]


async def pending_answer(
    client: httpx.AsyncClient, job_id: int, until: Callable[[dict[str, Any]], bool], what: str
) -> dict[str, Any]:
    """``GET /api/jobs/{job_id}/pending`` until ``until`` holds for its answer."""

    async def answer() -> dict[str, Any]:
        response = await client.get(f"/api/jobs/{job_id}/pending")
        assert response.status_code == 200, response.text
        return dict(response.json())

    return await eventually(answer, until=until, interval=0.5, what=f"job {job_id}: {what}")


async def test_held_job_is_explained_and_a_finished_one_is_not_pending(svc_api_client: httpx.AsyncClient) -> None:
    script = "#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --hold\nsleep 60\n"
    job_id = (await svc_api_client.post("/api/jobs", json={"script_content": script, "name": "held"})).json()["job_id"]
    try:
        body = await pending_answer(svc_api_client, job_id, lambda body: body["reason"] == "JobHeldUser", "held")
        assert body == {
            "job_id": str(job_id),
            "pending": True,
            "status": "PENDING",
            "reason": "JobHeldUser",
            "explanation": (
                f"Job {job_id} is held (JobHeldUser): it will not start until it is released "
                f"(scontrol release {job_id})."
            ),
            "needs_action": True,
            "limit": None,
            "start_estimate": None,
        }
    finally:
        assert (await svc_api_client.delete(f"/api/jobs/{job_id}")).status_code == 204
    body = await pending_answer(svc_api_client, job_id, lambda body: not body["pending"], "no longer pending")
    assert body["explanation"] == f"Job {job_id} is CANCELLED, not pending."


@pytest.mark.parametrize(("job_id", "status"), [(999_999_999, 404), (-3, 400), (0, 404)])
async def test_unknown_or_bad_job_id(svc_api_client: httpx.AsyncClient, job_id: int, status: int) -> None:
    response = await svc_api_client.get(f"/api/jobs/{job_id}/pending")
    assert response.status_code == status
    assert set(response.json()) == {"detail"}


async def test_would_it_fit(svc_api_client: httpx.AsyncClient) -> None:
    fits = await svc_api_client.post(
        "/api/jobs/test", json={"script_content": "#!/bin/bash\n#SBATCH -p debug\n#SBATCH -t 5\ntrue\n"}
    )
    assert fits.status_code == 200, fits.text
    assert fits.json()["fits"] is True
    assert fits.json()["start_estimate"]["partition"] == "debug"
    refused = await svc_api_client.post(
        "/api/jobs/test", json={"script_content": "#!/bin/bash\n#SBATCH -p nosuchpartition\ntrue\n"}
    )
    assert refused.status_code == 200
    assert refused.json()["fits"] is False
    assert refused.json()["refusal"] == "invalid partition specified: nosuchpartition; Invalid partition name specified"
    bad = await svc_api_client.post("/api/jobs/test", json={"script_content": ""})
    assert bad.status_code == 422
    assert "script_content" in bad.json()["detail"]


async def test_declared_in_openapi(svc_api_client: httpx.AsyncClient) -> None:
    paths = (await svc_api_client.get("/openapi.json")).json()["paths"]
    assert set(paths["/api/jobs/{job_id}/pending"]) == {"get"}
    assert set(paths["/api/jobs/test"]) == {"post"}
    assert "404" in paths["/api/jobs/{job_id}/pending"]["get"]["responses"]
