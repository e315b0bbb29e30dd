"""A job is (cluster, id): two clusters that number their jobs alike never answer for each other's jobs.

Two fake transports stand for two clusters (``local`` is the server's default, ``lab22`` another one): each
numbers its jobs from 1000, so every id exists on both, which two real clusters do all the time.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import httpx
import pytest

from svc_host import hookimpl
from svc_host.domain.jobs import JobState
from svc_host.domain.resources import NodeInfo
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.testing.fake import FakeTransport, transport_plugin


@pytest.fixture
def clusters(svc_register_plugin: Callable[..., None]) -> dict[str, FakeTransport]:
    made = {name: FakeTransport(name) for name in ("local", "lab22")}
    for transport in made.values():
        svc_register_plugin(transport_plugin(transport), f"fake-{transport.name}")
    return made


def script(name: str) -> dict[str, str]:
    return {"script_content": "#!/bin/bash\necho hi\n", "job_name": name}


async def submit_both(client: httpx.AsyncClient) -> int:
    """One job on each cluster, with the same id: ``prep`` on local, ``train`` on lab22."""
    here = (await client.post("/api/jobs", json=script("prep"))).json()
    there = (await client.post("/api/jobs?transport=lab22", json=script("train"))).json()
    assert here["job_id"] == there["job_id"]
    return int(here["job_id"])


async def test_detail_answers_the_named_clusters_job(
    svc_api_client: httpx.AsyncClient, clusters: dict[str, FakeTransport]
) -> None:
    job_id = await submit_both(svc_api_client)
    there = (await svc_api_client.get(f"/api/jobs/{job_id}?transport=lab22")).json()
    here = (await svc_api_client.get(f"/api/jobs/{job_id}")).json()
    assert (there["name"], there["transport"]) == ("train", "lab22")
    assert (here["name"], here["transport"]) == ("prep", "local")


async def test_logs_are_read_on_the_named_cluster(
    svc_api_client: httpx.AsyncClient, clusters: dict[str, FakeTransport]
) -> None:
    job_id = await submit_both(svc_api_client)
    for name, transport in clusters.items():
        path = (await svc_api_client.get(f"/api/jobs/{job_id}?transport={name}")).json()["stdout_path"]
        transport.write_log(path, f"written on {name}\n".encode())
    logs = (await svc_api_client.get(f"/api/jobs/{job_id}/logs?transport=lab22")).json()
    assert logs["stdout"] == "written on lab22\n"


async def test_cancel_cancels_on_the_named_cluster_only(
    svc_api_client: httpx.AsyncClient, clusters: dict[str, FakeTransport]
) -> None:
    job_id = await submit_both(svc_api_client)
    response = await svc_api_client.delete(f"/api/jobs/{job_id}?transport=lab22")
    assert response.status_code == 204
    assert clusters["lab22"].jobs[str(job_id)].state is JobState.CANCELLED
    assert clusters["local"].jobs[str(job_id)].state is JobState.PENDING


async def test_queue_lists_the_named_clusters_jobs(
    svc_api_client: httpx.AsyncClient, clusters: dict[str, FakeTransport]
) -> None:
    job_id = await submit_both(svc_api_client)
    clusters["lab22"].set_state(str(job_id), JobState.RUNNING)
    there = (await svc_api_client.get("/api/jobs?transport=lab22")).json()
    here = (await svc_api_client.get("/api/jobs")).json()
    assert [(job["job_id"], job["status"]) for job in there] == [(job_id, "RUNNING")]
    assert [(job["job_id"], job["status"]) for job in here] == [(job_id, "PENDING")]


async def test_unknown_cluster_is_404_naming_the_choices(
    svc_api_client: httpx.AsyncClient, clusters: dict[str, FakeTransport]
) -> None:
    for path in ("/api/jobs/1000", "/api/jobs/1000/logs", "/api/jobs/1000/pending", "/api/jobs/1000/script"):
        response = await svc_api_client.get(f"{path}?transport=lab99")
        assert response.status_code == 404, path
        assert response.json() == {"detail": "cluster 'lab99' not found; choose one of: lab22, local"}
    assert (await svc_api_client.delete("/api/jobs/1000?transport=lab99")).status_code == 404
    assert clusters["local"].calls == []


async def test_a_malformed_cluster_name_is_422(svc_api_client: httpx.AsyncClient) -> None:
    response = await svc_api_client.get("/api/jobs/1000?transport=..%2Fetc")
    assert response.status_code == 422


FLOW = "name: hello\njobs:\n  - name: greet\n    command: echo hello\n"


async def test_a_schedule_records_its_cluster_and_fires_there_whatever_is_the_default(
    svc_api_client: httpx.AsyncClient, svc_test_host: Host, clusters: dict[str, FakeTransport]
) -> None:
    await svc_api_client.post("/api/workflows/upload", json={"yaml": FLOW, "filename": "hello.yaml"})
    nightly = {"name": "nightly", "workflow": "hello", "every": 3600}
    created = await svc_api_client.post("/api/schedules", json=nightly)
    assert created.json()["transport"] == "local"  # the default when it was made, recorded
    profile = {"name": "lab22", "hostname": "lab22.example.org", "username": "me"}
    assert (await svc_api_client.post("/api/config/ssh/profiles", json=profile)).is_success
    assert (await svc_api_client.post("/api/config/ssh/profiles/lab22/activate")).is_success
    assert svc_test_host.server_transport_name() == "lab22"
    fired = await svc_api_client.post("/api/schedules/nightly/run")
    assert fired.status_code == 202, fired.text
    run = (await svc_api_client.get(f"/api/workflows/runs/{fired.json()['run_id']}")).json()
    assert run["transport"] == "local"
    assert clusters["lab22"].calls == []
    await svc_test_host.close_services()


async def test_a_schedule_on_an_unknown_cluster_is_refused(
    svc_api_client: httpx.AsyncClient, clusters: dict[str, FakeTransport]
) -> None:
    await svc_api_client.post("/api/workflows/upload", json={"yaml": FLOW, "filename": "hello.yaml"})
    refused = await svc_api_client.post(
        "/api/schedules", json={"name": "nightly", "workflow": "hello", "every": 3600, "transport": "lab99"}
    )
    assert refused.status_code == 404
    assert refused.json() == {"detail": "cluster 'lab99' not found; choose one of: lab22, local"}
    assert (await svc_api_client.get("/api/schedules")).json() == []


async def test_local_is_always_selectable_as_the_default_and_each_change_is_an_event(
    svc_api_client: httpx.AsyncClient,
    svc_test_host: Host,
    svc_register_plugin: Callable[..., None],
    clusters: dict[str, FakeTransport],
) -> None:
    seen: list[Event] = []
    recorder = hookimpl(lambda event: seen.append(event))  # noqa: PLW0108 (pluggy calls it by its argument name)
    svc_register_plugin(SimpleNamespace(svc_event=recorder), "recorder")
    profile = {"name": "lab22", "hostname": "lab22.example.org", "username": "me"}
    assert (await svc_api_client.post("/api/config/ssh/profiles", json=profile)).is_success
    assert (await svc_api_client.post("/api/config/ssh/profiles/lab22/activate")).is_success
    assert (await svc_api_client.post("/api/config/ssh/profiles/local/activate")).json() == {"ok": True}
    assert svc_test_host.server_transport_name() == "local"
    assert (await svc_api_client.get("/api/config/ssh/profiles")).json()["current"] == ""
    changes = [event.payload for event in seen if event.name == "server.default_changed"]
    assert changes == [{"transport": "lab22"}, {"transport": "local"}]


async def test_a_node_in_two_partitions_counts_once_in_the_cluster_total(
    svc_api_client: httpx.AsyncClient, svc_register_plugin: Callable[..., None]
) -> None:
    """One 4-GPU node in partitions debug and gpu, 1 GPU in use: 3 of 4 free, not the partitions' 6 of 8."""
    node = {"name": "node1", "raw_state": "mixed", "gpus_total": 4, "gpus_used": 1}
    nodes = [NodeInfo(partition=partition, **node) for partition in ("debug", "gpu")]
    svc_register_plugin(transport_plugin(FakeTransport("lab24", nodes=nodes)), "fake-lab24")
    partitions = (await svc_api_client.get("/api/resources?transport=lab24")).json()
    assert sum(p["gpus_available"] for p in partitions) == 6  # what the Overview added up before
    total = (await svc_api_client.get("/api/resources/total?transport=lab24")).json()
    assert (total["partition"], total["gpus_available"], total["total_gpus"]) == ("all", 3, 4)


async def test_a_transport_without_slurms_tools_cannot_say_which_cluster_it_is(
    svc_api_client: httpx.AsyncClient, svc_register_plugin: Callable[..., None]
) -> None:
    svc_register_plugin(transport_plugin(FakeTransport("lab24")), "fake-lab24")
    answer = await svc_api_client.get("/api/resources/cluster?transport=lab24")
    assert answer.status_code == 200
    assert answer.json() == {"transport": "lab24", "name": None, "controllers": None, "port": None, "key": None}
