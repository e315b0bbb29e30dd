"""GPU use over time on the dev cluster: the sampler's one resources query per interval lands in the store per
partition, a running GPU job shows in it, and ``GET /api/resources/history`` serves the series."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

import svc_plugin_local.hooks
from svc_host.domain.resources import ResourceSnapshot
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.runtime.sampler import ResourceSampler, SamplerSettings
from svc_host.testing.plugin import HOLDS_GPUS
from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, HOLDS_GPUS]


@pytest.fixture
def local(svc_register_plugin: Callable[..., None], slurm_cluster: None) -> None:
    svc_register_plugin(svc_plugin_local.hooks, "local", distribution="svc", version="0")


async def test_samples_of_the_real_cluster_follow_a_gpu_job(
    local: None, svc_test_host: Host, svc_api_client: httpx.AsyncClient
) -> None:
    events: list[Event] = []
    # interval 0: every sample() is stored however close together (the loop's own interval is not used here)
    sampler = ResourceSampler(
        svc_test_host.store,
        svc_test_host.transports,
        svc_test_host.watched_clusters,
        events.append,
        SamplerSettings(interval=0),
    )
    idle = {snap.partition: snap for snap in await sampler.sample("local")}
    assert {"debug", "gpu"} <= set(idle)
    assert idle["gpu"].total_gpus > 0

    script = "#!/bin/bash\n#SBATCH --job-name=history-gpu\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:1\nsleep 20\n"
    submitted = await svc_api_client.post("/api/jobs", json={"script_content": script})
    assert submitted.status_code == 201, submitted.text
    job_id = submitted.json()["job_id"]
    try:

        async def sampled() -> dict[str, ResourceSnapshot]:
            return {snap.partition: snap for snap in await sampler.sample("local")}

        await eventually(
            sampled,
            until=lambda busy: busy["gpu"].gpus_in_use > idle["gpu"].gpus_in_use,
            interval=0.5,
            what="the job running and its GPU counted",
        )
    finally:
        await svc_api_client.delete(f"/api/jobs/{job_id}")

    history = (await svc_api_client.get("/api/resources/history", params={"hours": 1})).json()
    gpu = next(series for series in history["series"] if series["partition"] == "gpu")
    assert len(gpu["points"]) == sampler.samples_taken
    assert max(point["gpus_in_use"] for point in gpu["points"]) >= idle["gpu"].gpus_in_use + 1
    assert all(event.name == "resources.sampled" for event in events)
    assert len(events) == sampler.samples_taken
