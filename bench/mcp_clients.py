"""The clients ``bench/mcp_startup.py`` opens MCP servers with, each timing one freshly spawned server.

* Python's ``ClientSession.initialize`` (the ``initialize`` handshake, as TypeScript SDK 1.x clients open too);
* the SDK's newer ``mcp.Client`` (``server/discover``, falling back to ``initialize``);
* the TypeScript SDK's ``Client`` (``@modelcontextprotocol/sdk`` from npm, installed into a temporary directory
  outside the repository) when Node is present;
* no SDK at all (``raw_jsonrpc``): JSON-RPC lines written to the server's stdin and read from its stdout, so what
  is left is the server's own time (a client SDK's first call may do work of its own, such as compiling the
  tool's output schema).

A sample is one server: spawn -> opening answered (``initialize``); the client then asks for the tool list without
waiting for it, as an agent host does at connect to show its model what it may call (the Python clients would
otherwise list them themselves before their first call's answer, to check it against the tool's output schema);
then either the tool called at once (``first``: spawn -> its answer) or called ``at`` seconds after spawn
(``later``: that call alone, ``sent``: when it was sent) followed by ``warm`` calls, each after ``pause`` seconds
(the same kind of call in a server that has long been up).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, ClientSession, stdio_client
from mcp.client.stdio import StdioServerParameters

Call = Callable[[str], Awaitable[None]]
Sample = dict[str, Any]
TS_CLIENT = Path(__file__).with_name("mcp_startup_ts.mjs")


@dataclass
class Opened:
    """A client whose opening was answered at ``at`` (``time.perf_counter()``) and that asked for the tools."""

    at: float
    call: Call


@asynccontextmanager
async def listing(list_tools: Callable[[], Awaitable[object]]) -> AsyncIterator[None]:
    """The tool list asked for in the background while the block runs (answered by the time it ends)."""
    asked = asyncio.ensure_future(list_tools())
    try:
        yield
    finally:
        await asked


Opener = Callable[[StdioServerParameters], AbstractAsyncContextManager[Opened]]


def _check(tool: str, failed: bool, content: object) -> None:
    if failed:
        raise SystemExit(f"{tool} failed: {content}")


@asynccontextmanager
async def client_session(params: StdioServerParameters) -> AsyncIterator[Opened]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        opened = time.perf_counter()

        async def call(tool: str) -> None:
            result = await session.call_tool(tool, {})
            _check(tool, result.is_error, result.content)

        async with listing(session.list_tools):
            yield Opened(opened, call)


@asynccontextmanager
async def new_client(params: StdioServerParameters) -> AsyncIterator[Opened]:
    async with Client(params) as client:
        opened = time.perf_counter()

        async def call(tool: str) -> None:
            result = await client.call_tool(tool, {})
            _check(tool, result.is_error, result.content)

        async with listing(client.list_tools):
            yield Opened(opened, call)


async def sample(
    opener: Opener, params: StdioServerParameters, tool: str, at: float | None, warm: int, pause: float
) -> Sample:
    spawned = time.perf_counter()
    async with opener(params) as opened:
        call = opened.call
        out: Sample = {"initialize": opened.at - spawned}
        if at is None:
            await call(tool)
            out["first"] = time.perf_counter() - spawned
            return out
        await asyncio.sleep(max(0.0, at - (time.perf_counter() - spawned)))
        out["sent"] = time.perf_counter() - spawned
        out["later"] = await _timed(call, tool)
        out["warm"] = []
        for _ in range(warm):
            await asyncio.sleep(pause)
            out["warm"].append(await _timed(call, tool))
        return out


async def _timed(call: Call, tool: str) -> float:
    started = time.perf_counter()
    await call(tool)
    return time.perf_counter() - started


@asynccontextmanager
async def raw_jsonrpc(params: StdioServerParameters) -> AsyncIterator[Opened]:
    process = await asyncio.create_subprocess_exec(
        params.command, *params.args, env=params.env, cwd=params.cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None
    assert stdout is not None
    answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
    ids = iter(range(1, 1 << 30))

    async def read() -> None:
        async for line in stdout:
            message = json.loads(line)
            waiting = answers.pop(message.get("id", -1), None)
            if waiting is not None:
                waiting.set_result(message)

    def send(method: str, params: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        request_id = next(ids)
        answers[request_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        stdin.write(json.dumps(message).encode() + b"\n")
        return answers[request_id]

    reader = asyncio.ensure_future(read())
    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench-raw", "version": "1"},
        }
        await send("initialize", hello)
        opened = time.perf_counter()
        stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')

        async def call(tool: str) -> None:
            answer = await send("tools/call", {"name": tool, "arguments": {}})
            _check(tool, "error" in answer or answer["result"].get("isError", False), answer)

        async with listing(lambda: send("tools/list")):
            yield Opened(opened, call)
    finally:
        stdin.close()
        await process.wait()
        reader.cancel()


def typescript_sdk(directory: Path) -> str | None:
    """Install ``@modelcontextprotocol/sdk`` into ``directory`` (once) and give its version; None without Node."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None
    package = directory / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    if not package.exists():
        directory.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--silent", "--prefix", str(directory), "@modelcontextprotocol/sdk"], check=True
        )
    shutil.copy(TS_CLIENT, directory / TS_CLIENT.name)
    version: str = json.loads(package.read_text())["version"]
    return version


async def typescript_sample(
    directory: Path, params: StdioServerParameters, tool: str, at: float | None, warm: int, pause: float
) -> Sample:
    spec = {
        "command": params.command,
        "args": params.args,
        "env": params.env,
        "cwd": str(params.cwd),
        "tool": tool,
        "at": at,
        "warm": warm,
        "pause": pause,
    }
    process = await asyncio.create_subprocess_exec(
        "node", TS_CLIENT.name, json.dumps(spec), cwd=directory, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise SystemExit("the TypeScript client failed (its error is above)")
    result: Sample = json.loads(out)
    return result
