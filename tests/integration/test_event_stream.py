"""The event stream of a real ``svc serve`` on the dev cluster: a real job's transitions arrive as they happen,
and the server stops promptly on SIGTERM with the stream still open (it must not wait for the browser)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator

import httpx
import pytest

from svc_host.testing.serve import ServeProcess, start_serve
from svc_host.testing.sse import sse_messages
from svc_host.testing.waiting import DEADLINE

pytestmark = [pytest.mark.cluster]

TOKEN = "event-stream-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def server(slurm_cluster: None) -> Iterator[ServeProcess]:
    server = start_serve(env={"SVC_API_TOKEN": TOKEN})
    try:
        yield server
    finally:
        server.stop(kill=True)


async def test_a_real_jobs_transitions_stream_live_and_sigterm_ends_open_streams(
    server: ServeProcess,
) -> None:
    base, process = server.base, server.process
    seen: list[str] = []
    async with (
        httpx.AsyncClient(base_url=base, headers=AUTH, timeout=30) as client,
        client.stream("GET", "/api/events", params={"types": "job.status_changed"}) as stream,
    ):
        assert stream.status_code == 200
        submitted = await client.post(
            "/api/jobs", json={"script_content": "#!/bin/bash\n#SBATCH --job-name=sse-live\nsleep 2\n"}
        )
        assert submitted.status_code == 201, submitted.text
        job_id = str(submitted.json()["job_id"])  # the REST Job has an integer id; events carry strings

        async def until_completed() -> None:
            async for message in sse_messages(stream):
                payload = message.json()["payload"]
                if payload["job_id"] == job_id:
                    seen.append(payload["to"])
                    if payload["to"] == "COMPLETED":
                        return

        await asyncio.wait_for(until_completed(), 90)
        assert seen[-1] == "COMPLETED"
        assert "RUNNING" in seen or seen == ["COMPLETED"]  # a 2 s job can end between two ticks

        process.send_signal(signal.SIGTERM)
        # a server that waited for its open stream to end would not stop: the stream stays open until it does
        _, err = await asyncio.to_thread(process.communicate, timeout=DEADLINE)
    assert process.returncode in (0, -signal.SIGTERM), err
    assert "Traceback" not in err
