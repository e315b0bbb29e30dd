"""``svc mcp`` answers the opening ``server/discover`` or ``initialize`` before the SDK is imported
(``svc_host.mcp.opening``): the answer must be the SDK's own, for every protocol version the SDK accepts, the
SDK must still get the session the client opened, and whatever svc does not answer must reach the SDK as sent."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from svc_host.mcp.handoff import installed_sdk
from svc_host.mcp.opening import HANDSHAKE_VERSIONS, VERIFIED_SDK, early_answer
from svc_host.testing.waiting import DEADLINE

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
SDK_SERVES_ITSELF = "from svc_host.mcp.server import create_server; create_server().run('stdio')"
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
SVC_MCP_WITH_A_PROBE = """
import sys
from mcp.server.mcpserver import Context
from svc_host import hookimpl
from svc_host.cli import main
from svc_host.plugin_core.manager import get_plugin_manager
from svc_host.plugin_core.records import ToolSpec

async def session_seen(ctx: Context) -> dict:
    session = ctx.session
    return {
        "success": True,
        "protocol_version": session.protocol_version,
        "client": session.client_params.client_info.name,
        "roots": session.client_capabilities.roots.model_dump(by_alias=True, exclude_none=True),
        "initialized": session._connection.initialized.is_set(),  # notifications/initialized reached the SDK
    }

class Probe:
    @hookimpl
    def svc_mcp_tools(self):
        return [ToolSpec("session_seen", session_seen, "What the SDK's session knows of its client.", read_only=True)]

get_plugin_manager().register(Probe(), "session-probe")
sys.argv = ["svc", "mcp"]
main()
"""
"""``svc mcp`` with one more tool, which tells what the SDK's session knows of the client that opened it."""


def frame(request_id: int | str | bool, method: str, params: dict[str, Any] | None = None) -> bytes:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": ENVELOPE} if params is None else params,
    }
    return json.dumps(body).encode() + b"\n"


def initialize(protocol_version: str, **client_info: Any) -> dict[str, Any]:
    return {
        "protocolVersion": protocol_version,
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "older-agent", "version": "1", **client_info},
    }


@asynccontextmanager
async def server(env: dict[str, str], *argv: str) -> AsyncIterator[asyncio.subprocess.Process]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env
    )
    try:
        yield process
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), DEADLINE)
        except TimeoutError:
            process.kill()
            raise


async def send(process: asyncio.subprocess.Process, *frames: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(b"".join(frames))
    await process.stdin.drain()


async def answer(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), DEADLINE)
    assert line, "the server closed stdout"
    body: dict[str, Any] = json.loads(line)
    return body


def test_the_installed_sdk_is_the_one_the_early_answers_were_checked_against() -> None:
    # Another SDK makes svc leave every opening to the SDK (correct, but slow): check the answers against it below,
    # then move VERIFIED_SDK and HANDSHAKE_VERSIONS.
    assert version("mcp") == VERIFIED_SDK
    assert installed_sdk() == VERIFIED_SDK  # how svc mcp reads it, faster than importlib.metadata
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize(
    "opening",
    [frame(7, "server/discover")] + [frame(7, "initialize", initialize(v)) for v in HANDSHAKE_PROTOCOL_VERSIONS],
    ids=["server/discover", *(f"initialize {v}" for v in HANDSHAKE_PROTOCOL_VERSIONS)],
)
async def test_the_early_answer_is_the_sdks_own(svc_home: dict[str, str], opening: bytes) -> None:
    early = early_answer(opening.rstrip(), version("mcp"))
    assert early is not None  # so svc answers it, not the SDK
    async with server(svc_home, "-c", SDK_SERVES_ITSELF) as process:
        await send(process, opening)
        sdks = await answer(process)
    assert json.loads(early.line) == sdks
    assert early.result == sdks["result"]
    assert sdks["id"] == 7


@pytest.mark.parametrize("protocol_version", HANDSHAKE_PROTOCOL_VERSIONS)
async def test_svc_answers_initialize_once_and_the_sdk_keeps_the_session(
    svc_home: dict[str, str], protocol_version: str
) -> None:
    opening = frame(1, "initialize", initialize(protocol_version))
    seen = frame(3, "tools/call", {"name": "session_seen", "arguments": {}})
    async with server(svc_home, "-c", SVC_MCP_WITH_A_PROBE) as process:
        await send(process, opening)
        hello = await answer(process)
        await send(process, INITIALIZED, frame(2, "tools/list", {}), seen)
        listed, called = await answer(process), await answer(process)
    early = early_answer(opening.rstrip(), VERIFIED_SDK)
    assert early is not None
    assert hello == json.loads(early.line)
    assert listed["id"] == 2  # not a second answer to initialize
    assert {"wait_for_change", "session_seen"} <= {tool["name"] for tool in listed["result"]["tools"]}
    assert called["id"] == 3
    assert json.loads(called["result"]["content"][0]["text"]) == {
        "success": True,
        "protocol_version": protocol_version,
        "client": "older-agent",
        "roots": {"listChanged": True},
        "initialized": True,
    }


async def test_an_initialize_svc_cannot_answer_is_the_sdks_and_the_session_goes_on(svc_home: dict[str, str]) -> None:
    async with server(svc_home, "-m", "svc_host", "mcp") as process:
        await send(process, frame(1, "initialize", initialize("2099-01-01")))
        hello = await answer(process)
        await send(process, INITIALIZED, frame(2, "tools/list", {}))
        listed = await answer(process)
    assert hello["id"] == 1
    assert hello["result"]["protocolVersion"] == HANDSHAKE_PROTOCOL_VERSIONS[-1]  # the SDK's counter-offer
    assert listed["id"] == 2
    assert "submit_job" in {tool["name"] for tool in listed["result"]["tools"]}


async def test_frames_sent_behind_the_opening_one_reach_the_sdk(svc_home: dict[str, str]) -> None:
    async with server(svc_home, "-m", "svc_host", "mcp") as process:
        await send(process, frame("a", "server/discover"), frame("b", "tools/list"))  # one write, no waiting
        first, second = await answer(process), await answer(process)
    assert first["id"] == "a"
    assert "tools" in first["result"]["capabilities"]
    assert second["id"] == "b"
    names = {tool["name"] for tool in second["result"]["tools"]}
    assert {"submit_job", "run_workflow", "wait_workflow_run", "wait_for_change", "list_ssh_profiles"} <= names


async def test_nothing_is_held_back_after_an_early_discover(svc_home: dict[str, str]) -> None:
    # server/discover is stateless: the SDK never sees it, so no answer of the SDK's may be taken for its double
    async with server(svc_home, "-m", "svc_host", "mcp") as process:
        await send(process, frame("a", "server/discover"))
        first = await answer(process)
        await send(process, frame("a", "tools/list"))  # the id again, once its request was answered
        second = await answer(process)
    assert first["id"] == second["id"] == "a"
    assert "submit_job" in {tool["name"] for tool in second["result"]["tools"]}


@pytest.mark.parametrize(
    ("opening", "sdk"),
    [
        (frame(1, "server/discover"), "2.4.0"),  # an SDK the answers were not checked against
        (frame(1, "initialize", initialize("2025-06-18")), "2.4.0"),
        (frame(1, "initialize", initialize("2099-01-01")), VERIFIED_SDK),  # the SDK counter-offers
        (frame(1, "initialize", initialize("2025-06-18", icons=[{"src": "x"}])), VERIFIED_SDK),  # the SDK judges
        (frame(1, "initialize", {**initialize("2025-06-18"), "capabilities": {"roots": True}}), VERIFIED_SDK),
        (frame(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}), VERIFIED_SDK),
        (frame(1, "server/discover", {"_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099"}}), None),
        (
            frame(1, "server/discover", {"_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099"}}),
            VERIFIED_SDK,
        ),
        (frame(True, "server/discover"), VERIFIED_SDK),  # a boolean is not a JSON-RPC id
        (b'{"jsonrpc":"2.0","id":1,"method":"server/discover"', VERIFIED_SDK),  # not JSON
        (b"[1, 2]", VERIFIED_SDK),
    ],
)
def test_anything_but_a_plain_opening_is_left_to_the_sdk(opening: bytes, sdk: str | None) -> None:
    assert early_answer(opening.rstrip(), sdk) is None


def test_initialize_is_left_to_the_sdk_when_its_answer_cannot_be_held_back() -> None:
    assert (
        early_answer(frame(1, "initialize", initialize("2025-06-18")).rstrip(), VERIFIED_SDK, handshake=False) is None
    )


@pytest.mark.parametrize(
    ("opening", "replay"),
    [(frame("req-1", "server/discover"), False), (frame("req-1", "initialize", initialize("2025-11-25")), True)],
)
def test_the_early_answer_echoes_the_request_id(opening: bytes, replay: bool) -> None:
    answered = early_answer(opening.rstrip(), VERIFIED_SDK)
    assert answered is not None
    assert answered.line.endswith(b"\n")
    assert json.loads(answered.line)["id"] == answered.request_id == "req-1"
    assert answered.replay is replay  # the SDK must see an initialize: it opens the session
