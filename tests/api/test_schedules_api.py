"""REST ``/api/schedules``: create, list, show with next fires, replace, delete, fire now; and, on the dev
cluster, a real ``svc serve`` whose scheduler fires a workflow that runs to completion."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from svc_host.host import Host
from svc_host.testing.serve import start_serve
from svc_host.testing.waiting import eventually_blocking

FLOW = "name: hello\njobs:\n  - name: greet\n    command: echo hello from a schedule\n"


@pytest.fixture
async def client(svc_api_client: httpx.AsyncClient, svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    assert (
        await svc_api_client.post("/api/workflows/upload", json={"yaml": FLOW, "filename": "hello.yaml"})
    ).is_success
    yield svc_api_client
    await svc_test_host.close_services()


def body(**fields: Any) -> dict[str, Any]:
    return {"name": "nightly", "workflow": "hello", "cron": "0 3 * * *", "timezone": "Europe/Berlin", **fields}


async def test_create_list_show_replace_delete(client: httpx.AsyncClient) -> None:
    created = await client.post("/api/schedules", json=body(args={"lr": "0.1"}))
    assert created.status_code == 201, created.text
    row = created.json()
    assert (row["name"], row["cron"], row["every"], row["enabled"], row["last_outcome"]) == (
        "nightly",
        "0 3 * * *",
        None,
        True,
        None,
    )
    berlin = [datetime.fromisoformat(t).astimezone(ZoneInfo("Europe/Berlin")) for t in row["upcoming"]]
    assert [moment.strftime("%H:%M") for moment in berlin] == ["03:00"] * 5  # local time, whatever DST does
    assert [(later.date() - earlier.date()).days for earlier, later in itertools.pairwise(berlin)] == [1] * 4
    assert row["next_fire_at"] == row["upcoming"][0]

    listed = (await client.get("/api/schedules")).json()
    assert [r["name"] for r in listed] == ["nightly"]
    assert "upcoming" not in listed[0]
    shown = (await client.get("/api/schedules/nightly", params={"upcoming": 2})).json()
    assert shown["upcoming"] == row["upcoming"][:2]

    replaced = await client.put("/api/schedules/nightly", json=body(cron=None, every=3600, enabled=False))
    assert replaced.status_code == 200
    assert (replaced.json()["every"], replaced.json()["next_fire_at"], replaced.json()["upcoming"]) == (3600, None, [])

    assert (await client.delete("/api/schedules/nightly")).json() == {"status": "deleted", "name": "nightly"}
    assert (await client.get("/api/schedules")).json() == []


@pytest.mark.parametrize(
    ("payload", "status", "detail"),
    [
        (body(workflow="nope"), 404, "workflow 'nope' not found"),
        (body(cron="0 25 * * *"), 422, "invalid cron '0 25 * * *': the hour (2nd field) must be 0-23"),
        (body(every=60), 422, "give exactly one of cron"),
        (body(sweep={"matrix": "lr"}), 400, "sweep.matrix must be a mapping"),
        (body(surprise=1), 422, "surprise: Extra inputs are not permitted"),
    ],
)
async def test_bad_schedules_are_refused_and_nothing_is_stored(
    client: httpx.AsyncClient, payload: dict[str, Any], status: int, detail: str
) -> None:
    response = await client.post("/api/schedules", json=payload)
    assert response.status_code == status
    assert detail in response.json()["detail"]
    assert (await client.get("/api/schedules")).json() == []


async def test_conflicts_and_unknown_names(client: httpx.AsyncClient) -> None:
    assert (await client.post("/api/schedules", json=body())).status_code == 201
    duplicate = await client.post("/api/schedules", json=body())
    assert (duplicate.status_code, duplicate.json()) == (409, {"detail": "schedule 'nightly' already exists"})
    assert (await client.get("/api/schedules/other")).status_code == 404
    assert (await client.delete("/api/schedules/other")).status_code == 404
    renamed = await client.put("/api/schedules/nightly", json=body(name="other"))
    assert renamed.status_code == 400
    assert (await client.get("/api/schedules/nightly", params={"upcoming": 1000})).status_code == 422


@pytest.mark.cluster
def test_a_running_server_fires_a_schedule_on_the_cluster(slurm_cluster: None, tmp_path: Path) -> None:
    """A real ``svc serve`` (local transport) with a 1 s scheduler tick: a 10 s schedule fires the workflow,
    the run is recorded ``triggered_by: schedule`` and its job completes on Slurm."""
    token = "schedule-test-token-0123456789"
    log = (tmp_path / "serve.log").open("w")
    server = start_serve(
        env={"SVC_API_TOKEN": token, "SVC_SCHEDULER_TICK": "1", "SVC_TRANSPORT": "local"},
        stderr=log,
        log_level="info",
    )
    try:
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
            assert http.post("/api/workflows/upload", json={"yaml": FLOW, "filename": "hello.yaml"}).is_success
            created = http.post("/api/schedules", json={"name": "often", "workflow": "hello", "every": 10})
            assert created.status_code == 201, created.text
            try:
                fired = eventually_blocking(
                    lambda: http.get("/api/schedules/often").json(),
                    until=lambda shown: shown["last_run_id"] is not None,
                    interval=0.5,
                    what="the schedule's first run",
                )
            except AssertionError as error:
                raise AssertionError(f"{error}\n{(tmp_path / 'serve.log').read_text()}") from None
            run_id = fired["last_run_id"]
            http.put("/api/schedules/often", json={"name": "often", "workflow": "hello", "every": 10, "enabled": False})
            run = eventually_blocking(
                lambda: http.get(f"/api/workflows/runs/{run_id}").json(),
                until=lambda run: run["status"] in ("completed", "failed", "cancelled"),
                interval=0.5,
                what=f"the end of run {run_id}",
            )
            assert (run["status"], run["triggered_by"]) == ("completed", "schedule"), run
    finally:
        server.stop()
        log.close()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
