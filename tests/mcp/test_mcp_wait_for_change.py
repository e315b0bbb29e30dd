"""``wait_for_change`` as an agent uses it: ``svc mcp`` over real stdio, the official client, the dev cluster.

The wait is woken by the events the monitor and the run services publish in the server process; these tests
assert what an agent sees in order (each answer is a change, never a timeout, until the subject ends), not how
long anything took.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TERMINAL_JOB = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED"}


async def follow(call: Callable[..., Any], limit: int = 10, **subject: Any) -> list[dict[str, Any]]:
    """Answers of ``wait_for_change`` for ``subject``, each call passing the status the last one returned, until
    one is final (at most ``limit`` calls)."""
    answers: list[dict[str, Any]] = []
    status = None
    for _ in range(limit):
        answer = await call("wait_for_change", timeout_seconds=120, since_status=status, **subject)
        assert answer["success"], answer
        answers.append(answer)
        if answer["final"]:
            return answers
        status = answer["status"]
    raise AssertionError(f"not final after {limit} changes: {answers}")


@pytest.mark.cluster
async def test_a_job_that_ends_wakes_the_wait_with_each_change(
    mcp_factory: Callable[[], Any], slurm_cluster: None
) -> None:
    async with mcp_factory() as mcp:
        submitted = await mcp("submit_job", command="sleep 3", name="wait-ends", partition="debug")
        assert submitted["success"], submitted
        job_id = submitted["job_id"]

        answers = await follow(mcp, job_id=job_id)

        assert all(answer["changed"] for answer in answers)  # every call ended on a change, none on its timeout
        statuses = [answer["status"] for answer in answers]
        assert statuses[-1] == "COMPLETED"
        assert set(statuses[:-1]) <= {"PENDING", "RUNNING"}
        assert statuses == sorted(statuses, key=["PENDING", "RUNNING", "COMPLETED"].index)
        last = answers[-1]
        assert (last["job_id"], last["transport"], last["name"], last["exit_code"]) == (job_id, "local", "wait-ends", 0)
        assert last["changes"][0]["subject"] == "job"
        assert last["changes"][0]["to"] == "COMPLETED"

        ended = await mcp("wait_for_change", job_id=job_id, timeout_seconds=300)
        assert (ended["changed"], ended["final"], ended["status"]) == (False, True, "COMPLETED")  # at once


@pytest.mark.cluster
async def test_a_wait_without_a_change_times_out_and_a_cancel_wakes_the_next(
    mcp_factory: Callable[[], Any], slurm_cluster: None
) -> None:
    async with mcp_factory() as mcp:
        submitted = await mcp("submit_job", command="sleep 600", name="wait-still", partition="debug")
        assert submitted["success"], submitted
        job_id = submitted["job_id"]
        try:
            status = submitted["status"]
            while status != "RUNNING":
                answer = await mcp("wait_for_change", job_id=job_id, since_status=status, timeout_seconds=120)
                assert answer["changed"], answer
                status = answer["status"]

            quiet = await mcp("wait_for_change", job_id=job_id, since_status="RUNNING", timeout_seconds=1)
            assert quiet == {
                "success": True,
                "changed": False,
                "final": False,
                "job_id": job_id,
                "transport": "local",
                "name": "wait-still",
                "status": "RUNNING",
                "raw_state": "RUNNING",
                "exit_code": None,
                "changes": [],
            }

            moved = await mcp("wait_for_change", job_id=job_id, since_status="PENDING")
            assert (moved["changed"], moved["changes"]) == (  # the status moved since the one given: at once
                True,
                [{"subject": "job", "id": job_id, "from": "PENDING", "to": "RUNNING"}],
            )
        finally:
            cancelled = await mcp("cancel_job", job_id=job_id)
        assert cancelled["success"], cancelled
        woken = await mcp("wait_for_change", job_id=job_id, since_status="RUNNING", timeout_seconds=120)
        assert (woken["changed"], woken["final"], woken["status"]) == (True, True, "CANCELLED")


@pytest.mark.cluster
async def test_a_job_the_cli_submitted_is_followed_by_the_server(
    svc_home: dict[str, str], mcp_factory: Callable[[], Any], slurm_cluster: None
) -> None:
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "svc_host", "submit", "--json", "--name", "from-cli", "-p", "debug", "--", "sleep", "2",
        env=svc_home, cwd=svc_home["SVC_WORK"], stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await cli.communicate()
    assert cli.returncode == 0
    job_id = json.loads(out)["job_id"]  # the CLI has exited: only the server follows the job now
    async with mcp_factory() as mcp:
        answers = await follow(mcp, job_id=job_id)
    assert all(answer["changed"] for answer in answers)
    assert (answers[-1]["name"], answers[-1]["status"]) == ("from-cli", "COMPLETED")


@pytest.mark.cluster
async def test_cell_changes_wake_a_sweep_wait(svc_home: dict[str, str], slurm_cluster: None) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "cells.yaml").write_text("name: wait-cells\nargs: {n: 1}\njobs:\n  - {name: nap, command: 'sleep 2'}\n")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "svc_host", "mcp", "--root", svc_home["SVC_WORK"]],
        env=svc_home,
        cwd=svc_home["SVC_WORK"],
    )
    async with Client(params) as client:
        found: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            match = re.match(r"sweep (\d+) ", message or "")
            if match and not found.done():
                found.set_result(int(match.group(1)))

        sweep_call = asyncio.ensure_future(
            client.call_tool(
                "run_workflow",
                {"yaml_path": "cells.yaml", "sweep": {"matrix": {"n": [1, 2]}, "max_parallel": 1}},
                progress_callback=on_progress,
            )
        )
        sweep_id = await asyncio.wait_for(found, 120)

        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            assert result.structured_content is not None, result
            return result.structured_content

        answers = await follow(call, limit=30, sweep_run_id=sweep_id)
        swept = (await sweep_call).structured_content
    assert swept is not None
    assert swept["success"], swept

    assert all(answer["changed"] for answer in answers)
    changes = [change for answer in answers for change in answer["changes"]]
    cells = {change["id"] for change in changes if change["subject"] == "cell"}
    assert len(cells) == 2  # both cells' changes woke a wait
    assert [change["to"] for change in changes if change["subject"] == "cell"].count("completed") == 2
    last = answers[-1]
    assert (last["sweep_run_id"], last["status"], last["cell_count"], last["cells_completed"]) == (
        sweep_id,
        "completed",
        2,
        2,
    )


async def test_bad_arguments_are_refused_by_name(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        cases: list[tuple[dict[str, Any], str]] = [
            ({}, "give exactly one of job_id (a job svc submitted), run_id (a workflow run) and sweep_run_id"),
            ({"job_id": "1", "run_id": "r"}, ", got job_id and run_id"),
            ({"job_id": "abc"}, "job_id must be digits or '<id>_<index>'"),
            ({"run_id": "r", "transport": "hpc"}, "transport applies to job_id only"),
            ({"job_id": "1", "timeout_seconds": 301}, "argument 'timeout_seconds': Input should be less than or equal"),
            ({"job_id": "1", "timeout_seconds": -1}, "argument 'timeout_seconds': Input should be greater than"),
            ({"sweep_run_id": 0}, "argument 'sweep_run_id': Input should be greater than or equal to 1"),
            ({"job_id": "999999999"}, "job 999999999 on 'local' was not submitted through svc"),
            ({"job_id": "1", "transport": "nope"}, "unknown transport 'nope'; choose one of: local"),
            ({"run_id": "no-such-run"}, "workflow run 'no-such-run' not found"),
            ({"sweep_run_id": 424242}, "sweep run 424242 not found"),
            ({"job_id": "1", "until": "COMPLETED"}, "unknown argument 'until'"),
        ]
        for arguments, error in cases:
            answer = await mcp("wait_for_change", **arguments)
            assert answer["success"] is False, arguments
            assert error in answer["error"], (arguments, answer["error"])
