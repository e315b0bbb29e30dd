"""MCP ``get_limits`` through the real client (``svc mcp`` over stdio) on the dev cluster."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("slurm_cluster")]


async def test_get_limits_names_the_user_and_the_limits_that_refuse_sbatch(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        tools = {tool.name: tool for tool in await mcp("__list__")}
        assert tools["get_limits"].annotations.read_only_hint is True
        found = await mcp("get_limits")
        assert found["success"] is True, found
        assert (found["user"], found["account"], found["max_array_size"]) == ("root", "root", 1001)
        assert "MaxJobCount" in [item["name"] for item in found["submit_limits"]]
        unknown = await mcp("get_limits", transport="nope")
        assert unknown == {"success": False, "error": "no transport or SSH profile named 'nope'; choose one of: local"}
