"""Array tasks (``123_4``) and ranges of them (``123_[1-2]``) on every ``/api/jobs/{job_id}`` route, on a real
job array of the dev cluster."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("local_transport")]

ARRAY_SCRIPT = (
    '#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --array=0-2%1\necho "task $SLURM_ARRAY_TASK_ID"\nsleep 300\n'
)


async def test_an_array_task_opens_tails_explains_and_cancels(svc_api_client: httpx.AsyncClient) -> None:
    client = svc_api_client
    submitted = await client.post("/api/jobs", json={"script_content": ARRAY_SCRIPT, "job_name": "arr"})
    assert submitted.status_code == 201, submitted.text
    array = submitted.json()["job_id"]
    first, second, third = f"{array}_0", f"{array}_1", f"{array}_2"
    try:

        async def listed() -> dict[str, dict[str, Any]] | None:
            rows = {row["job_id"]: row for row in (await client.get("/api/jobs")).json()}
            return rows if rows.get(first, {}).get("status") == "RUNNING" else None

        rows = await eventually(listed, interval=0.5, what=f"{first} running in GET /api/jobs")
        assert rows[second]["status"] == rows[third]["status"] == "PENDING"  # %1: one task at a time

        job = (await client.get(f"/api/jobs/{first}")).json()
        assert (job["job_id"], job["status"], job["name"]) == (first, "RUNNING", "arr")

        async def logged() -> str:
            return str((await client.get(f"/api/jobs/{first}/logs")).json()["stdout"])

        assert (await eventually(logged, interval=0.5, what=f"{first}'s stdout")).strip() == "task 0"

        why = (await client.get(f"/api/jobs/{second}/pending")).json()
        assert (why["job_id"], why["pending"]) == (second, True)
        script = await client.get(f"/api/jobs/{first}/script")
        assert script.status_code == 200
        assert "sleep 300" in script.json()["script"]

        assert (await client.delete(f"/api/jobs/{array}_[1-2]")).status_code == 204

        async def both_cancelled() -> bool:
            answers = [(await client.get(f"/api/jobs/{task}")) for task in (second, third)]
            assert [answer.status_code for answer in answers] == [200, 200], [answer.text for answer in answers]
            return [answer.json()["status"] for answer in answers] == ["CANCELLED", "CANCELLED"]

        await eventually(both_cancelled, interval=0.5, what=f"{second} and {third} cancelled")
        assert (await client.get(f"/api/jobs/{first}")).json()["status"] == "RUNNING"
        again = await client.delete(f"/api/jobs/{array}_[1-2]")
        assert again.status_code == 422
        assert again.json() == {"detail": f"no task of {array}_[1-2] is pending or running; nothing to cancel"}
        assert (await client.delete(f"/api/jobs/{first}")).status_code == 204
    finally:
        await client.delete(f"/api/jobs/{array}")


@pytest.mark.parametrize(
    ("method", "path", "status", "detail"),
    [
        ("GET", "/api/jobs/12_[1-2]", 400, "job id must be a non-negative integer, or <id>_<index> for an array task"),
        ("GET", "/api/jobs/12_x/logs", 400, "got '12_x'"),
        ("GET", "/api/jobs/12_-1/pending", 400, "got '12_-1'"),
        ("GET", "/api/jobs/12_1_2/script", 400, "got '12_1_2'"),
        ("GET", "/api/history/efficiency/jobs/12_x", 400, "got '12_x'"),
        ("DELETE", "/api/jobs/12_[2-1]", 400, "'2-1' runs backwards"),
        ("DELETE", "/api/jobs/0_[1-2]", 404, "job 0_[1-2] not found: Slurm job ids start at 1"),
        ("DELETE", "/api/jobs/999999999_[1-2]", 404, "job array 999999999 not found on transport 'local'"),
        ("GET", "/api/jobs/999999999_3", 404, "job 999999999_3 not found on transport 'local'"),
    ],
)
async def test_bad_and_unknown_task_ids(
    svc_api_client: httpx.AsyncClient, method: str, path: str, status: int, detail: str
) -> None:
    response = await svc_api_client.request(method, path)
    assert response.status_code == status, response.text
    assert detail in response.json()["detail"]
