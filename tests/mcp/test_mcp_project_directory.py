"""An agent started in a project directory (``svc mcp`` with no ``--root``) works on the workflows there with the
spec's default arguments, on the real dev cluster through the official MCP client over stdio; the project's
untrusted ``.svc.json`` still changes nothing, and the spec's argument errors come before any path check."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

CHAIN = """name: chain
jobs:
  - {name: first, command: 'echo one > first.out'}
  - {name: second, command: 'cat first.out > second.out', depends_on: [first]}
"""
MADE = [{"name": "hello", "command": "echo {{ word }} > hello.out"}]
MOUNT_ERROR = "mount requires an SSH transport; pass transport='<profile>' (local runs have no mount translation"


async def _call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    body = result.structured_content
    assert isinstance(body, dict), result
    return body


@pytest.mark.cluster
async def test_the_seeds_defaults_work_in_the_directory_the_agent_started_in(
    svc_home: dict[str, str], slurm_cluster: None
) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "flows").mkdir()
    (work / "flows" / "chain.yaml").write_text(CHAIN)
    (work / ".svc.json").write_text('{"log_dir": "untrusted-logs"}')  # never trusted: must change nothing
    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=svc_home, cwd=str(work))
    async with Client(params) as client:
        listed = await _call(client, "list_workflows")
        assert listed == {
            "success": True,
            "workflows": [
                {
                    "path": str(work / "flows" / "chain.yaml"),
                    "name": "chain",
                    "job_count": 2,
                    "job_names": ["first", "second"],
                }
            ],
            "count": 1,
        }
        valid = await _call(client, "validate_workflow", yaml_path="flows/chain.yaml")
        assert (valid["success"], valid["valid"], valid["job_count"]) == (True, True, 2), valid
        shown = await _call(client, "get_workflow", yaml_path="flows/chain.yaml")
        assert (shown["success"], shown["name"], shown["raw_yaml"]) == (True, "chain", CHAIN), shown

        created = await _call(
            client, "create_workflow", name="made", jobs=MADE, output_path="made.yaml", args={"word": "hi"}
        )
        assert (created["success"], created["path"]) == (True, str(work / "made.yaml")), created
        assert (await _call(client, "list_workflows"))["count"] == 2

        chain = await _call(client, "run_workflow", yaml_path="flows/chain.yaml", wait_seconds=300)
        assert (chain["success"], chain["all_completed"], chain["status"]) == (True, True, "completed"), chain
        assert (work / "second.out").read_text() == "one\n"
        made = await _call(client, "run_workflow", yaml_path=str(work / "made.yaml"), wait_seconds=300)
        assert (made["success"], made["all_completed"]) == (True, True), made
        assert (work / "hello.out").read_text() == "hi\n"
        job_id = made["results"]["hello"]["job_id"]
        assert (work / "logs" / f"hello-{job_id}.out").exists()  # the untrusted project config set no log_dir
        assert not (work / "untrusted-logs").exists()

        refused = await _call(client, "validate_workflow", yaml_path="/etc/passwd")
        assert refused == {"success": False, "error": "Path '/etc/passwd' is outside allowed directories"}


async def test_argument_errors_come_before_the_path(svc_home: dict[str, str], write_profiles: Any) -> None:
    """A mount without a transport, a mount the profile lacks and ``python:`` args are the spec's messages
    whether the file is there, missing or outside every root; a bad document is reported before its path."""
    work = Path(svc_home["SVC_WORK"])
    (work / "chain.yaml").write_text(CHAIN)
    mounts = [{"name": "proj", "local": str(work), "remote": "p"}]
    write_profiles({"profiles": {"dev": {"hostname": "127.0.0.1", "mounts": mounts}}})
    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=svc_home, cwd=str(work))
    async with Client(params) as client:
        for yaml_path in ("chain.yaml", "missing.yaml", "/etc/chain.yaml"):
            no_transport = await _call(client, "run_workflow", yaml_path=yaml_path, mount="proj")
            assert no_transport["success"] is False
            assert no_transport["error"].startswith(MOUNT_ERROR), (yaml_path, no_transport)
            unknown = await _call(client, "run_workflow", yaml_path=yaml_path, transport="dev", mount="nope")
            assert unknown == {"success": False, "error": "Mount 'nope' not found in profile 'dev'"}, yaml_path
            python = await _call(client, "run_workflow", yaml_path=yaml_path, args={"x": "python:1"}, dry_run=True)
            assert python == {
                "success": False,
                "error": "args at 'x' contains 'python:' prefix which is not allowed: 'python:1'",
            }, yaml_path
        bad_jobs = await _call(client, "create_workflow", name="n", jobs=[{"command": "x"}], output_path="/etc/n.yaml")
        assert bad_jobs["success"] is False
        assert "outside allowed directories" not in bad_jobs["error"], bad_jobs
