"""MCP ``get_limits`` through the real client (``svc mcp`` over stdio) on the dev cluster."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.site_qos import own_qos

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
        assert unknown["success"] is False
        assert unknown["error"].startswith("no transport or SSH profile named 'nope'; choose one of: ")
        assert "local" in unknown["error"].rsplit(": ", 1)[1].split(", ")  # beside the installed plugins' (site)


QOS = "svc_throttle_mcp"
"""MaxSubmitJobsPerUser=1, granted to root (the local transport's user) by the test and removed after it."""


@pytest.fixture
def one_job_qos() -> Iterator[str]:
    with own_qos(QOS, "MaxSubmitJobsPerUser=1") as made:
        yield made


async def test_a_run_held_under_a_qos_limit_says_so_to_the_agent(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str], one_job_qos: str
) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "hold.sh").write_text(f"#!/bin/bash\n#SBATCH --qos={one_job_qos}\nsleep 4\n")
    (work / "held.yaml").write_text(
        "name: held\njobs:\n  - {name: first, script_path: hold.sh}\n  - {name: second, script_path: hold.sh}\n"
    )
    async with mcp_factory() as mcp:
        started = await mcp("run_workflow", yaml_path=str(work / "held.yaml"), wait_seconds=1)
        assert started["success"] is True, started
        assert started["results"]["second"] == {"job_id": None, "status": "WAITING", "attempts": []}
        assert started["queued"] == f"queued: MaxSubmitJobsPerUser 1 of QOS {one_job_qos} reached (1 in queue)"
        done = await mcp("wait_workflow_run", run_id=started["run_id"], wait_seconds=120)
        assert (done["status"], done["all_completed"], done["queued"]) == ("completed", True, None)
