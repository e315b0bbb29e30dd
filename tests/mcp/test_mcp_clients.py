"""Every kind of client opens ``svc mcp`` and calls a tool on the local Slurm: Python's ``ClientSession.initialize``
(the handshake that TypeScript SDK 1.x clients also open with, answered by svc before the SDK is loaded) and the
SDK's newer ``mcp.Client`` (``server/discover``), each in a server of its own."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from mcp import Client, ClientSession, stdio_client
from mcp.client.stdio import StdioServerParameters
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

pytestmark = pytest.mark.cluster


def spawn(svc_home: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "svc_host", "mcp"], env=svc_home, cwd=svc_home["SVC_WORK"]
    )


def resources_of(content: dict[str, Any] | None) -> dict[str, Any]:
    assert content is not None
    assert content["success"] is True, content
    assert content["total_gpus"] == 4  # the dev cluster's one node
    return content


async def test_client_session_initialize_then_a_tool(svc_home: dict[str, str]) -> None:
    async with stdio_client(spawn(svc_home)) as (read, write), ClientSession(read, write) as session:
        hello = await session.initialize()
        assert hello.protocol_version == LATEST_HANDSHAKE_VERSION
        assert hello.server_info.name == "svc"
        assert "get_resources" in {tool.name for tool in (await session.list_tools()).tools}
        resources_of((await session.call_tool("get_resources", {})).structured_content)


async def test_the_newer_client_then_a_tool(svc_home: dict[str, str]) -> None:
    async with Client(spawn(svc_home)) as client:
        assert client.protocol_version == LATEST_MODERN_VERSION
        resources_of((await client.call_tool("get_resources", {})).structured_content)
