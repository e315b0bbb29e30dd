"""An agent follows a workflow run (and a sweep) by id with ``wait_workflow_run`` after ``run_workflow``
returned early: nothing is submitted a second time (counted in Slurm's accounting). Dev cluster, real stdio."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.cluster


def slurm_jobs_in(work: Path) -> list[tuple[str, str]]:
    """(job id, name) of every job Slurm knows (queued or accounted, any user, last hour) that ran in ``work``:
    the test's own directory, so other tests' jobs never count."""
    queue = subprocess.run(["squeue", "-h", "-o", "%i|%j|%Z"], capture_output=True, text=True, check=True).stdout
    accounted = subprocess.run(
        ["sacct", "-a", "-X", "-n", "-P", "-o", "JobID,JobName,WorkDir", "-S", "now-1hour"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rows = {tuple(line.split("|")) for line in (queue + accounted).splitlines() if line.count("|") == 2}
    return sorted((job_id, name) for job_id, name, where in rows if where == str(work))


def params(svc_home: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "svc_host", "mcp", "--root", svc_home["SVC_WORK"]],
        env=svc_home,
        cwd=svc_home["SVC_WORK"],
    )


async def test_a_run_is_followed_by_id_without_a_second_submission(
    svc_home: dict[str, str], slurm_cluster: None
) -> None:
    work = Path(svc_home["SVC_WORK"])
    flow = f"follow-{uuid.uuid4().hex[:8]}"
    (work / "slow.yaml").write_text(
        f"name: {flow}\njobs:\n  - {{name: nap, command: 'sleep 8'}}\n"
        "  - {name: after, command: 'echo done', depends_on: [nap]}\n"
    )
    async with Client(params(svc_home)) as client:
        first = (
            await client.call_tool("run_workflow", {"yaml_path": "slow.yaml", "wait_seconds": 3})
        ).structured_content
        assert first is not None
        assert first["success"], first
        assert first["all_completed"] is False
        assert first["status"] == "running"  # every job submitted, the first one still sleeping
        run_id = first["run_id"]
        nap_id = first["results"]["nap"]["job_id"]
        submitted = sorted((entry["job_id"], name) for name, entry in first["results"].items())
        assert slurm_jobs_in(work) == submitted

        progress: list[tuple[float, float | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total))

        followed = await client.call_tool(
            "wait_workflow_run", {"run_id": run_id, "wait_seconds": 120}, progress_callback=on_progress
        )
        body = followed.structured_content
        assert body is not None
        assert body["success"], body
        assert (body["run_id"], body["workflow"], body["status"], body["all_completed"]) == (
            run_id,
            flow,
            "completed",
            True,
        )
        assert body["results"]["nap"]["job_id"] == nap_id
        assert {entry["status"] for entry in body["results"].values()} == {"COMPLETED"}
        assert progress[-1] == (2, 2)
        assert sorted((entry["job_id"], name) for name, entry in body["results"].items()) == submitted
        assert slurm_jobs_in(work) == submitted  # followed, never submitted again

        again = (await client.call_tool("wait_workflow_run", {"run_id": run_id, "wait_seconds": 0})).structured_content
        assert again == body


async def test_a_sweep_is_followed_by_its_id(svc_home: dict[str, str], slurm_cluster: None) -> None:
    work = Path(svc_home["SVC_WORK"])
    flow = f"sweep-{uuid.uuid4().hex[:8]}"
    (work / "sweep.yaml").write_text(
        f"name: {flow}\nargs: {{n: 1}}\njobs:\n  - {{name: a, command: 'echo {{{{ n }}}}'}}\n"
    )
    async with Client(params(svc_home)) as client:
        swept = (
            await client.call_tool("run_workflow", {"yaml_path": "sweep.yaml", "sweep": {"matrix": {"n": [1, 2]}}})
        ).structured_content
        assert swept is not None
        assert swept["success"], swept
        followed = (
            await client.call_tool("wait_workflow_run", {"sweep_run_id": swept["sweep_run_id"], "wait_seconds": 30})
        ).structured_content
        assert followed == {**swept, "all_completed": swept["status"] == "completed"}
        assert followed["cells_completed"] == 2
        missing = (
            await client.call_tool("wait_workflow_run", {"sweep_run_id": 10**9, "wait_seconds": 0})
        ).structured_content
        assert missing == {"success": False, "error": f"sweep run {10**9} not found"}
