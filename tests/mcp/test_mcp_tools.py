"""The MCP tools as an agent sees them: the official client spawns ``svc mcp`` over stdio."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from svc_host.domain.profiles import SSHProfile

pytestmark = pytest.mark.cluster

TOOLS = {
    "submit_job": (False, False),
    "list_jobs": (True, False),
    "get_job_status": (True, False),
    "get_efficiency": (True, False),
    "cancel_job": (False, True),
    "get_job_logs": (True, False),
    "get_resources": (True, False),
    "get_config": (True, False),
    "list_ssh_profiles": (True, False),
}


async def wait_status(mcp: Callable[..., Any], job_id: str, wanted: set[str], **extra: Any) -> dict[str, Any]:
    for _ in range(120):
        status = await mcp("get_job_status", job_id=job_id, **extra)
        assert status["success"], status
        if status["status"] in wanted:
            return status
        await asyncio.sleep(0.5)
    raise AssertionError(f"job {job_id} never reached {wanted}: {status}")


async def test_tools_are_listed_with_hints_and_descriptions(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        tools = {tool.name: tool for tool in await mcp("__list__")}
        for name, (read_only, destructive) in TOOLS.items():
            assert name in tools, name
            assert tools[name].annotations.read_only_hint is read_only, name
            assert tools[name].annotations.destructive_hint is destructive, name
            assert len(tools[name].description or "") > 40
        schema = tools["submit_job"].input_schema
        assert schema["required"] == ["command"]
        assert schema["properties"]["log_dir"]["default"] == "logs"


async def test_submit_status_logs_on_the_local_scheduler(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str]
) -> None:
    async with mcp_factory() as mcp:
        submitted = await mcp("submit_job", command="echo hello; echo oops >&2", name="mcp job")
        assert submitted["success"], submitted
        job_id = submitted["job_id"]
        assert isinstance(job_id, str)
        assert job_id.isdigit()
        assert submitted["status"] == "PENDING"
        done = await wait_status(mcp, job_id, {"COMPLETED", "FAILED"})
        efficiency = done.pop("efficiency", None)  # an ended job's, once accounting gave its usage
        assert efficiency is None or efficiency["flagged"] is False, efficiency  # it asked only the defaults
        assert done == {
            "success": True,
            "job_id": job_id,
            "name": "mcp job",
            "status": "COMPLETED",
            "partition": "debug",
            "nodes": "1",
        }
        logs = await mcp("get_job_logs", job_id=job_id)
        work = Path(svc_home["SVC_WORK"])
        assert logs == {
            "success": True,
            "job_id": job_id,
            "stdout": "hello\n",
            "stderr": "oops\n",
            "log_files": [f"{work}/logs/mcp_job-{job_id}.out", f"{work}/logs/mcp_job-{job_id}.err"],
            "stdout_offset": 0,
            "stdout_next_offset": 6,
            "stdout_size": 6,
            "stdout_truncated": False,
            "stderr_offset": 0,
            "stderr_next_offset": 5,
            "stderr_size": 5,
            "stderr_truncated": False,
        }


async def test_failed_and_cancelled_jobs(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        failing = await mcp("submit_job", command="exit 3")
        long = await mcp("submit_job", command="sleep 120", name="sleeper")
        await wait_status(mcp, long["job_id"], {"RUNNING", "PENDING"})
        listed = await mcp("list_jobs")
        assert listed["success"]
        assert listed["count"] == len(listed["jobs"])
        mine = {job["job_id"]: job for job in listed["jobs"]}
        assert mine[long["job_id"]]["name"] == "sleeper"
        assert set(mine[long["job_id"]]) == {"name", "job_id", "status", "partition", "nodes"}
        cancelled = await mcp("cancel_job", job_id=long["job_id"])
        assert cancelled["success"], cancelled
        assert (await wait_status(mcp, long["job_id"], {"CANCELLED"}))["status"] == "CANCELLED"
        again = await mcp("cancel_job", job_id=long["job_id"])
        assert again["success"] is False
        assert "already ended" in again["error"]
        assert (await wait_status(mcp, failing["job_id"], {"FAILED", "COMPLETED"}))["status"] == "FAILED"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("get_job_status", {"job_id": "12; rm -rf /"}, "job_id must be digits or '<id>_<index>'"),
        ("get_job_status", {"job_id": "999999999"}, "job 999999999 not found on transport 'local'"),
        ("submit_job", {"command": "true", "transport": "nope"}, "unknown transport 'nope'; choose one of: local"),
        ("submit_job", {"command": "true", "time_limit": "soon"}, "time_limit"),
        ("submit_job", {"command": "true", "env_vars": {"1BAD": "x"}}, "shell identifiers"),
        ("get_resources", {"partition": "nope"}, "partition 'nope' not found"),
    ],
)
async def test_failures_are_success_false_with_an_error(
    mcp_factory: Callable[[], Any], tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with mcp_factory() as mcp:
        result = await mcp(tool, **arguments)
        assert result["success"] is False
        assert message in result["error"]
        assert "Traceback" not in result["error"]


async def test_local_resources_shape(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        whole = await mcp("get_resources")
        assert set(whole) == {
            "success",
            "partition",
            "total_gpus",
            "gpus_in_use",
            "gpus_available",
            "gpu_utilization",
            "jobs_running",
            "nodes_total",
            "nodes_idle",
            "nodes_down",
            "gpu_types",  # added beside the spec's fields: GPUs per type (docs/interfaces.md)
            "shares_nodes_with",  # and the partitions sharing its nodes: none for the whole cluster
        }
        assert whole["shares_nodes_with"] == []
        assert whole["gpu_types"] == [
            {"type": None, "total": 4, "in_use": whole["gpus_in_use"], "available": whole["gpus_available"]}
        ]
        assert whole["partition"] == "all"
        assert whole["total_gpus"] == 4  # one node with 4 GPUs, counted once although in two partitions
        gpu = await mcp("get_resources", partition="gpu")
        assert gpu["partition"] == "gpu"
        assert gpu["nodes_total"] == 1
        assert "debug" in gpu["shares_nodes_with"]  # the dev node is in both


async def test_config_and_profiles_without_any_setup(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        assert await mcp("get_config") == {
            "success": True,
            "resources": {
                "nodes": 1,
                "gpus_per_node": 0,
                "ntasks_per_node": 1,
                "cpus_per_task": 1,
                "memory_per_node": None,
                "time_limit": None,
                "partition": None,
                "nodelist": None,
            },
            "environment": {"conda": None, "venv": None, "env_vars": {}},
            "log_dir": "logs",
            "work_dir": None,
        }
        assert await mcp("list_ssh_profiles") == {"success": True, "profiles": [], "current": "", "count": 0}


async def test_get_config_masks_environment_values(svc_home: dict[str, str], mcp_factory: Callable[[], Any]) -> None:
    user_file = Path(svc_home["XDG_CONFIG_HOME"]) / "svc" / "config.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text(json.dumps({"environment": {"env_vars": {"HF_TOKEN": "hf_abcdefghijkl"}}}))
    async with mcp_factory() as mcp:
        config = await mcp("get_config")
    assert config["environment"]["env_vars"] == {"HF_TOKEN": "<redacted>"}
    assert "hf_abcdefghijkl" not in json.dumps(config)


@pytest.mark.parametrize(
    ("profile", "field"),
    [
        ({"hostname": "h", "mounts": [{"name": "home", "local": "/tmp", "remote": "~"}]}, "mounts.0.remote"),
        ({"hostname": "h", "env_vars": {"-Secho INJECTED #": "x"}}, "env_vars"),
    ],
)
def test_a_profiles_file_with_a_hostile_profile_stops_the_server_naming_the_field(
    write_profiles: Callable[[dict[str, Any]], None], svc_home: dict[str, str], profile: Any, field: str
) -> None:
    write_profiles({"current": None, "profiles": {"gpu": profile}})
    started = subprocess.run(
        [sys.executable, "-m", "svc_host", "mcp"], input="", capture_output=True, text=True, timeout=60,
        env=svc_home, cwd=svc_home["SVC_WORK"], check=False,
    )  # fmt: skip
    assert started.returncode != 0
    assert "Traceback" not in started.stderr
    profiles_file = Path(svc_home["XDG_CONFIG_HOME"]) / "svc" / "profiles.json"
    assert started.stderr.strip().startswith(f"error: {profiles_file}: profiles.gpu.{field}: ")


async def test_ssh_transport_through_a_profile(
    svc_home: dict[str, str],
    write_profiles: Callable[[dict[str, Any]], None],
    dev_profile: SSHProfile,
    dev_env: dict[str, str],
    mcp_factory: Any,
) -> None:
    write_profiles({"current": "dev", "profiles": {"dev": dev_profile.model_dump()}})
    async with mcp_factory() as mcp:
        profiles = await mcp("list_ssh_profiles")
        assert profiles["count"] == 1
        assert profiles["profiles"][0]["name"] == "dev"
        assert profiles["profiles"][0]["is_current"] is True
        resources = await mcp("get_resources", transport="dev")
        assert resources["success"], resources
        assert [r["partition"] for r in resources["resources"]] == dev_env["SVC_DEV_SLURM_PARTITIONS"].split(",")
        assert resources["resources"][0]["has_available_gpus"] in (True, False)
        missing_dir = await mcp("submit_job", command="true", transport="dev")
        assert missing_dir == {
            "success": False,
            "error": "work_dir is required with transport='dev': give a directory on the cluster",
        }
        job = await mcp("submit_job", command="whoami", transport="dev", work_dir="svc-mcp-test")
        assert job["success"], job
        await wait_status(mcp, job["job_id"], {"COMPLETED"}, transport="dev")
        logs = await mcp("get_job_logs", job_id=job["job_id"], transport="dev")
        assert logs["stdout"] == "svcdev\n"
        assert logs["log_files"] == [
            f"svc-mcp-test/logs/job-{job['job_id']}.out",
            f"svc-mcp-test/logs/job-{job['job_id']}.err",
        ]
