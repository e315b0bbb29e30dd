"""The renderer is chosen by configuration (``rendering.renderer``) and per job (``renderer``), on the dev cluster."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from svc_host import hookimpl
from svc_host.domain.submission import JobDefinition, RenderedScript
from svc_host.plugin_core.records import RendererSpec
from svc_host.rendering.sbatch import render_sbatch
from svc_host.settings.paths import SvcPaths
from svc_host.testing.waiting import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("local_transport")]

SCRIPT = "#!/bin/bash\n#SBATCH --partition=debug\necho body\n"


def render_marked(definition: JobDefinition) -> RenderedScript:
    script = render_sbatch(definition)
    return script.model_copy(update={"text": f"{script.text.rstrip()}\necho rendered-by-marker\n"})


@pytest.fixture
def marker(svc_register_plugin: Callable[..., None]) -> None:
    renderers = [RendererSpec(name="marker", render=render_marked, description="default + a marker line")]
    svc_register_plugin(SimpleNamespace(svc_renderers=hookimpl(lambda: renderers)), "marker")


async def output_of(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    created = await client.post("/api/jobs", json=body)
    assert created.status_code == 201, created.text
    job_id = created.json()["job_id"]

    async def status() -> str:
        return str((await client.get(f"/api/jobs/{job_id}")).json()["status"])

    await eventually(
        status, until=lambda status: status in ("COMPLETED", "FAILED"), interval=0.5, what=f"job {job_id}'s end"
    )
    return str((await client.get(f"/api/jobs/{job_id}/logs")).json()["stdout"])


@pytest.mark.usefixtures("marker")
async def test_the_configured_renderer_writes_every_job_unless_the_job_names_its_own(
    svc_api_client: httpx.AsyncClient,
) -> None:
    assert (await svc_api_client.get("/api/config")).json()["rendering"] == {"renderer": "default"}
    chosen = await svc_api_client.put("/api/config", json={"rendering": {"renderer": "marker"}})
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["rendering"] == {"renderer": "marker"}
    assert await output_of(svc_api_client, {"script_content": SCRIPT}) == "body\nrendered-by-marker\n"
    assert await output_of(svc_api_client, {"script_content": SCRIPT, "renderer": "default"}) == "body\n"
    preview = await svc_api_client.post("/api/scripts/preview", json={"command": "true"})
    assert preview.json()["script"].endswith("echo rendered-by-marker\n")


@pytest.mark.usefixtures("marker")
async def test_an_unknown_renderer_is_refused_naming_the_known_ones_and_changes_nothing(
    svc_api_client: httpx.AsyncClient, svc_paths: SvcPaths
) -> None:
    await svc_api_client.put("/api/config", json={"log_dir": "kept"})
    stored = svc_paths.user_config.read_text()
    refused = await svc_api_client.put("/api/config", json={"rendering": {"renderer": "nope"}})
    assert refused.status_code == 422
    assert refused.json() == {"detail": "rendering.renderer: unknown renderer 'nope'; choose one of: default, marker"}
    assert svc_paths.user_config.read_text() == stored
    job = await svc_api_client.post("/api/jobs", json={"script_content": SCRIPT, "renderer": "nope"})
    assert job.status_code == 422
    assert job.json() == {"detail": "job 'job': unknown renderer 'nope'; choose one of: default, marker"}
    assert (await svc_api_client.get("/api/history")).json() == []  # nothing was submitted
    assert json.loads(svc_paths.user_config.read_text()) == {"log_dir": "kept"}
