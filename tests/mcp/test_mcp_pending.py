"""MCP ``explain_pending`` and ``submit_job(test_only=true)`` through the official client over stdio, against the
dev cluster."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.cluster


@pytest.fixture
def held_job(sbatch_job: Callable[..., str]) -> str:
    """A job held on submission (reason JobHeldUser)."""
    return sbatch_job("--hold", "-p", "debug", "-J", "mcp-held", "--wrap", "sleep 60")


async def test_explain_pending(mcp_factory: Callable[[], Any], held_job: str) -> None:
    async with mcp_factory() as mcp:
        for _ in range(120):
            answer = await mcp("explain_pending", job_id=held_job)
            assert answer["success"], answer
            if answer["reason"] == "JobHeldUser":
                break
            await asyncio.sleep(0.5)
        assert answer["pending"] is True
        assert answer["needs_action"] is True
        assert answer["explanation"] == (
            f"Job {held_job} is held (JobHeldUser): it will not start until it is released "
            f"(scontrol release {held_job})."
        )
        tools = {tool.name: tool for tool in await mcp("__list__")}
        assert tools["explain_pending"].annotations.read_only_hint is True


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"job_id": "abc"}, "job_id must be digits or '<id>_<index>'"),
        ({"job_id": "999999999"}, "job 999999999 not found"),
        ({"job_id": "5", "transport": "nosuchprofile"}, "nosuchprofile"),
        ({}, "missing required argument 'job_id'"),
    ],
)
async def test_explain_pending_bad_input(mcp_factory: Callable[[], Any], arguments: dict[str, Any], error: str) -> None:
    async with mcp_factory() as mcp:
        answer = await mcp("explain_pending", **arguments)
        assert answer["success"] is False
        assert error in answer["error"]


async def test_submit_job_test_only_submits_nothing(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        fits = await mcp("submit_job", command="true", name="mcp-fit", partition="debug", test_only=True)
        assert fits["success"], fits
        assert fits["fits"] is True
        assert fits["start_estimate"]["nodes"] == "localhost"
        assert fits["transport"] == "local"
        refused = await mcp(
            "submit_job", command="true", name="mcp-fit", partition="gpu", gpus_per_node=9, test_only=True
        )
        assert refused["success"] is True
        assert refused["fits"] is False
        assert refused["refusal"] == "Requested node configuration is not available"
        queue = await mcp("list_jobs")
        assert "mcp-fit" not in [job["name"] for job in queue["jobs"]]
