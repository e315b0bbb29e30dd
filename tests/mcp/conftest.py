"""An isolated svc home for MCP tests and a client that spawns ``svc mcp`` over real stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters


@pytest.fixture
def svc_home(home: Path) -> dict[str, str]:
    """The environment of tests/conftest.py's isolated user for the server process; ``SVC_WORK`` is the
    directory the server runs in (a test helper variable, not an svc setting)."""
    return {**os.environ, "SVC_WORK": os.getcwd()}


@pytest.fixture
def write_profiles(svc_home: dict[str, str]) -> Callable[[dict[str, Any]], None]:
    def _write(data: dict[str, Any]) -> None:
        path = Path(svc_home["XDG_CONFIG_HOME"]) / "svc" / "profiles.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    return _write


@pytest.fixture
def mcp_factory(svc_home: dict[str, str]) -> Callable[[], Any]:
    """``async with mcp_factory() as mcp:`` starts ``svc mcp`` over real stdio with the fresh home.

    No ``--root``: the working directory, where the tests write workflow files, is a root as it is for an agent.
    (A context manager inside the test, not a yield fixture: the client's task group must be entered and left in
    the same task.)
    """

    @asynccontextmanager
    async def start() -> AsyncIterator[Callable[..., Any]]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "svc_host", "mcp"], env=svc_home, cwd=svc_home["SVC_WORK"]
        )
        async with Client(params) as client:

            async def call(tool: str, **arguments: Any) -> Any:
                """``await mcp(tool, **arguments)`` -> the structured result; ``"__list__"`` lists the tools."""
                if tool == "__list__":
                    return (await client.list_tools()).tools
                result = await client.call_tool(tool, arguments)
                assert result.structured_content is not None, result
                return result.structured_content

            yield call

    return start
