"""An agent sees every attempt of a run's jobs and why it was made (``run_workflow``, ``wait_workflow_run``):
dev cluster, the real MCP client over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.cluster

FLOW = """\
name: retried
jobs:
  - {name: flaky, command: "test -e failed-once || { touch failed-once; exit 3; }", retry: 2, retry_delay: 0}
  - name: hog
    command: python3 -c "x = b'1' * (400 << 20)"
    resources: {memory_per_node: 50M, time_limit: "5"}
"""


async def test_results_carry_the_attempts_and_their_reasons(svc_home: dict[str, str], slurm_cluster: None) -> None:
    (Path(svc_home["SVC_WORK"]) / "retried.yaml").write_text(FLOW)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "svc_host", "mcp", "--root", svc_home["SVC_WORK"]],
        env=svc_home,
        cwd=svc_home["SVC_WORK"],
    )
    async with Client(params) as client:
        ran = (
            await client.call_tool("run_workflow", {"yaml_path": "retried.yaml", "wait_seconds": 120})
        ).structured_content
        assert ran is not None
        assert (ran["success"], ran["status"], ran["all_completed"]) == (True, "failed", False)
        flaky, hog = ran["results"]["flaky"], ran["results"]["hog"]
        assert [(a["attempt"], a["state"], a["exit_code"], a["reason"]) for a in flaky["attempts"]] == [
            (1, "FAILED", 3, "FAILED: retry 1 of 2"),
            (2, "COMPLETED", 0, None),
        ]
        assert flaky["job_id"] == flaky["attempts"][-1]["job_id"]
        assert [(a["state"], a["resources"]["memory_per_node"], a["reason"]) for a in hog["attempts"]] == [
            ("OUT_OF_MEMORY", "50M", "OUT_OF_MEMORY: not retried (no escalate.memory rule)")
        ]
        assert ran["run_error"] == "job 'hog' ended OUT_OF_MEMORY"
        followed = (
            await client.call_tool("wait_workflow_run", {"run_id": ran["run_id"], "wait_seconds": 0})
        ).structured_content
        assert followed is not None
        assert followed["results"] == ran["results"]
