"""``svc mcp`` answers the opening ``server/discover`` before the SDK is imported (``svc_host.mcp.opening``): the
answer must be the SDK's own, and whatever svc does not answer must reach the SDK byte for byte."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import pytest

from svc_host.mcp.opening import VERIFIED_SDK, early_answer
from svc_host.testing.waiting import DEADLINE

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
SDK_SERVES_ITSELF = "from svc_host.mcp.server import create_server; create_server().run('stdio')"


def frame(request_id: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {"_meta": ENVELOPE}}
    return json.dumps(body).encode() + b"\n"


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


async def answer(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), DEADLINE)
    assert line, "the server closed stdout"
    body: dict[str, Any] = json.loads(line)
    return body


def test_the_installed_sdk_is_the_one_the_early_answer_was_checked_against() -> None:
    # Another SDK makes svc leave every opening to the SDK (correct, but slow): check the answer against it below,
    # then move VERIFIED_SDK.
    assert version("mcp") == VERIFIED_SDK


async def test_the_early_answer_is_the_sdks_own(svc_home: dict[str, str]) -> None:
    opening = frame(7, "server/discover")
    assert early_answer(opening.rstrip(), version("mcp")) is not None  # so svc answers it, not the SDK
    answers = []
    for argv in (["-m", "svc_host", "mcp"], ["-c", SDK_SERVES_ITSELF]):
        async with server(svc_home, *argv) as process:
            assert process.stdin is not None
            process.stdin.write(opening)
            await process.stdin.drain()
            answers.append(await answer(process))
    ours, sdks = answers
    assert ours == sdks
    assert ours["id"] == 7
    assert ours["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "svc"


async def test_frames_sent_behind_the_opening_one_reach_the_sdk(svc_home: dict[str, str]) -> None:
    async with server(svc_home, "-m", "svc_host", "mcp") as process:
        assert process.stdin is not None
        process.stdin.write(frame("a", "server/discover") + frame("b", "tools/list"))  # one write, no waiting
        await process.stdin.drain()
        first, second = await answer(process), await answer(process)
    assert first["id"] == "a"
    assert "tools" in first["result"]["capabilities"]
    assert second["id"] == "b"
    names = {tool["name"] for tool in second["result"]["tools"]}
    assert {"submit_job", "run_workflow", "wait_workflow_run", "wait_for_change", "list_ssh_profiles"} <= names


async def test_a_legacy_initialize_is_answered_by_the_sdk_and_the_session_goes_on(svc_home: dict[str, str]) -> None:
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "older-agent", "version": "1"},
    }
    async with server(svc_home, "-m", "svc_host", "mcp") as process:
        assert process.stdin is not None
        process.stdin.write(frame(1, "initialize", initialize))
        await process.stdin.drain()
        hello = await answer(process)
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        process.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}\n')
        await process.stdin.drain()
        listed = await answer(process)
    assert hello["id"] == 1
    assert hello["result"]["protocolVersion"] == "2025-06-18"
    assert hello["result"]["serverInfo"]["name"] == "svc"
    assert listed["id"] == 2
    assert "wait_for_change" in {tool["name"] for tool in listed["result"]["tools"]}


@pytest.mark.parametrize(
    ("opening", "sdk"),
    [
        (frame(1, "server/discover"), "2.4.0"),  # an SDK the answer was not checked against
        (frame(1, "initialize"), VERIFIED_SDK),  # the stateful handshake: the SDK must see it
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
def test_anything_but_a_plain_discover_is_left_to_the_sdk(opening: bytes, sdk: str | None) -> None:
    assert early_answer(opening.rstrip(), sdk) is None


def test_the_early_answer_echoes_the_request_id() -> None:
    answered = early_answer(frame("req-1", "server/discover").rstrip(), VERIFIED_SDK)
    assert answered is not None
    assert answered.endswith(b"\n")
    assert json.loads(answered)["id"] == "req-1"
