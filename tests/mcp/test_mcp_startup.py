"""``svc mcp`` answers ``initialize`` at once and opens the store in the background from spawn on: an agent gets a
live server at once, and a store that cannot be opened is a tool's ``{success: false, error}``, never a server that
dies at spawn."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


async def test_the_first_tool_call_finds_the_store_open_and_migrated(
    svc_home: dict[str, str], mcp_factory: Callable[[], Any]
) -> None:
    database = Path(svc_home["XDG_STATE_HOME"]) / "svc" / "svc.db"
    async with mcp_factory() as mcp:
        assert "get_job_status" in {tool.name for tool in await mcp("__list__")}
        profiles = await mcp("list_ssh_profiles")
        assert profiles == {"success": True, "profiles": [], "current": "", "count": 0}
        assert database.exists()  # the Host started: its store is there, migrated
        missing = await mcp("get_job_status", job_id="999999999")
        assert missing["success"] is False
        assert "999999999" in missing["error"]


async def test_an_unusable_database_is_a_tool_error_not_a_dead_server(
    svc_home: dict[str, str], mcp_factory: Callable[[], Any]
) -> None:
    svc_home["SVC_DATABASE_URL"] = "not a url"
    async with mcp_factory() as mcp:
        assert "submit_job" in {tool.name for tool in await mcp("__list__")}
        for _ in range(2):  # the failed start is not retried into a crash: every call says the same
            result = await mcp("list_jobs")
            assert result["success"] is False
            assert result["error"].startswith("SVC_DATABASE_URL is not a database URL")


async def test_the_store_is_opened_from_spawn_on_before_the_client_says_anything(svc_home: dict[str, str]) -> None:
    # agents spawn their servers at launch and call them later: the loading must not wait for the first request
    database = Path(svc_home["XDG_STATE_HOME"]) / "svc" / "svc.db"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "svc_host", "mcp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        env=svc_home,
    )  # fmt: skip
    try:
        for _ in range(600):
            if database.exists():
                break
            await asyncio.sleep(0.1)
        assert database.exists(), "no store 60 s after spawn"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0
