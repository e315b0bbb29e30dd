"""``svc mcp`` answers ``initialize`` before it opens the store: an agent gets a live server at once, and a
store that cannot be opened is a tool's ``{success: false, error}``, never a server that dies at spawn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


async def test_the_store_is_opened_by_the_first_tool_call(
    svc_home: dict[str, str], mcp_factory: Callable[[], Any]
) -> None:
    database = Path(svc_home["XDG_STATE_HOME"]) / "svc" / "svc.db"
    async with mcp_factory() as mcp:
        assert "get_job_status" in {tool.name for tool in await mcp("__list__")}
        profiles = await mcp("list_ssh_profiles")
        assert profiles == {"success": True, "profiles": [], "current": "", "count": 0}
        assert database.exists()  # the first tool call started the Host: its store is there, migrated
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
