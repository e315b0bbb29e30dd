"""``svc mcp`` answers ``initialize`` at once and opens the store in the background from spawn on: an agent gets a
live server at once, and a store that cannot be opened is a tool's ``{success: false, error}``, never a server that
dies at spawn."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


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
            result = await mcp("get_job_status", job_id="1")
            assert result["success"] is False
            assert result["error"].startswith("SVC_DATABASE_URL is not a database URL")
        assert (await mcp("list_jobs"))["success"] is True  # it asks only the scheduler: the queue is still shown


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


SERVE_AND_REPORT = """
import atexit, sys
atexit.register(lambda: sys.stderr.write(f"ASYNCSSH IMPORTED {'asyncssh' in sys.modules}\\n"))
sys.argv = ["svc", *sys.argv[1:]]
from svc_host.cli import main
main()
"""


async def test_serving_the_local_cluster_never_imports_the_ssh_library(
    svc_home: dict[str, str], write_profiles: Callable[[dict[str, Any]], None]
) -> None:
    # an SSH profile is configured (the ssh and rsync plugins list its transport and its sync backend), but
    # no call uses it: asyncssh (0.1-0.2 s of CPU) is left out of the loading every spawn of svc mcp pays
    write_profiles({"profiles": {"gpu": {"hostname": "gpu.example.org", "mounts": []}}})
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SERVE_AND_REPORT, "mcp", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=svc_home, cwd=svc_home["SVC_WORK"],
    )  # fmt: skip
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    assert stdin is not None
    assert stdout is not None
    assert stderr is not None

    async def ask(message: dict[str, Any]) -> dict[str, Any]:
        stdin.write(json.dumps(message).encode() + b"\n")
        answer: dict[str, Any] = json.loads(await asyncio.wait_for(stdout.readline(), 120))
        return answer

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in await ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for request_id, tool in enumerate(("list_ssh_profiles", "list_jobs"), start=2):
            call = {"name": tool, "arguments": {}}
            answer = await ask({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call})
            result = answer["result"]["structuredContent"]
            assert result["success"] is True, answer
            if tool == "list_ssh_profiles":
                assert [profile["name"] for profile in result["profiles"]] == ["gpu"]
    finally:
        stdin.close()
        await asyncio.wait_for(process.wait(), 120)
    errors = (await stderr.read()).decode()
    assert process.returncode == 0, errors
    assert "ASYNCSSH IMPORTED False" in errors.splitlines(), errors


BUILD_AND_REPORT = """
import sys
from svc_host.mcp.server import load
load()
print(sorted(name for name in ("sqlalchemy", "sqlmodel") if name in sys.modules))
"""


async def test_the_server_is_built_without_the_orm(svc_home: dict[str, str]) -> None:
    # the server serves once it is built; the ORM (about 0.4 s of CPU to import) loads after, while list_jobs and
    # get_resources, which need no store, are answered: a tool module that imports the store at its top loses that
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", BUILD_AND_REPORT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=svc_home,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, stderr.decode()
    assert stdout.decode().strip() == "[]"


@pytest.mark.cluster
async def test_the_first_list_jobs_runs_only_what_a_later_one_runs(
    svc_home: dict[str, str], mcp_factory: Callable[[], Any], tmp_path: Path
) -> None:
    # every `id` the server runs is logged: the local login is asked while the Host starts, not by the first call
    real_id = shutil.which("id")
    assert real_id is not None
    wrappers, log = tmp_path / "bin", tmp_path / "id.log"
    wrappers.mkdir()
    (wrappers / "id").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real_id} "$@"\n')
    (wrappers / "id").chmod(0o755)
    svc_home["PATH"] = f"{wrappers}:{svc_home['PATH']}"
    async with mcp_factory() as mcp:
        assert (await mcp("list_ssh_profiles"))["success"] is True  # it waits for the Host's start
        asked_at_start = log.read_text() if log.exists() else ""
        first = await mcp("list_jobs")
        assert first["success"] is True, first
        assert (log.read_text() if log.exists() else "") == asked_at_start == "-un\n"
