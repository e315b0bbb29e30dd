"""What an MCP call waits for while the server's host starts: a tool that asks only the scheduler is answered at
once; one that reads svc's records waits for the store."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from mcp import Client

from svc_host.domain.submission import RenderedScript
from svc_host.host import Host
from svc_host.mcp import server as mcp_server
from svc_host.testing.fake import FakeTransport


@pytest.fixture
def held_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The host's start is held before it opens the store until the event is set (always set at the end)."""
    release = threading.Event()
    prepare = mcp_server.prepare

    def held(host: Host) -> None:
        release.wait(600)
        prepare(host)

    monkeypatch.setattr(mcp_server, "prepare", held)
    yield release
    release.set()


async def test_list_jobs_is_answered_while_the_store_still_loads(
    svc_test_host: Host, fake: FakeTransport, held_start: threading.Event
) -> None:
    job_id = await fake.submit(RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e"))
    async with Client(mcp_server.create_server(svc_test_host)) as client:
        status = asyncio.ensure_future(client.call_tool("get_job_status", {"job_id": job_id, "transport": "fake"}))
        # held, the start would never end within these deadlines: an answer in time did not wait for it
        listed = (await asyncio.wait_for(client.call_tool("list_jobs", {"transport": "fake"}), 60)).structured_content
        resources = await asyncio.wait_for(client.call_tool("get_resources", {"transport": "fake"}), 60)
        assert listed is not None
        assert listed["success"] is True, listed
        assert [job["job_id"] for job in listed["jobs"]] == [job_id]
        assert resources.structured_content is not None
        assert resources.structured_content["success"] is True, resources
        assert not status.done()  # it reads svc's store, which is not open yet
        held_start.set()
        answered = (await asyncio.wait_for(status, 60)).structured_content
    assert answered is not None
    assert answered["success"] is True, answered
    assert answered["status"] == "PENDING"
