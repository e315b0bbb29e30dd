"""``get_job_logs``' ``job_name`` (the MCP spec: "helps locate log files") finds the logs of a job that neither svc
nor the scheduler knows any more where svc writes them, ``<log_dir>/<name>-<id>.out``; on the dev cluster's real
Slurm, through the official MCP client over stdio."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FORGOTTEN = "987654321"
"""A job id the dev cluster's Slurm never handed out: ``squeue``, ``scontrol`` and ``sacct`` all answer nothing, as
for a job purged from accounting."""


@pytest.mark.cluster
async def test_a_forgotten_job_is_found_by_its_name(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str], slurm_cluster: None
) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "logs").mkdir()
    (work / "logs" / f"train_v2-{FORGOTTEN}.out").write_text("epoch 1\nepoch 2\n")
    (work / "logs" / f"train_v2-{FORGOTTEN}.err").write_text("warning: slow disk\n")
    async with mcp_factory() as mcp:
        unnamed = await mcp("get_job_logs", job_id=FORGOTTEN)
        assert unnamed == {"success": False, "error": f"job {FORGOTTEN} not found on transport 'local'"}

        found = await mcp("get_job_logs", job_id=FORGOTTEN, job_name="train v2")  # named as submitted
        assert found["success"], found
        assert (found["job_id"], found["stdout"], found["stderr"]) == (
            FORGOTTEN,
            "epoch 1\nepoch 2\n",
            "warning: slow disk\n",
        )
        assert found["log_files"] == [f"logs/train_v2-{FORGOTTEN}.out", f"logs/train_v2-{FORGOTTEN}.err"]
        tail = await mcp("get_job_logs", job_id=FORGOTTEN, job_name="train v2", tail_lines=1)
        assert tail["stdout"] == "epoch 2\n"

        missing = await mcp("get_job_logs", job_id=FORGOTTEN, job_name="other")
        assert missing == {
            "success": False,
            "error": f"job {FORGOTTEN} not found on transport 'local', and no log of a job named 'other' at "
            f"logs/other-{FORGOTTEN}.out or logs/other-{FORGOTTEN}.err",
        }


@pytest.mark.cluster
async def test_the_configured_log_dir_is_where_it_looks(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str], slurm_cluster: None
) -> None:
    config = Path(svc_home["XDG_CONFIG_HOME"]) / "svc" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"log_dir": "out/slurm"}))
    work = Path(svc_home["SVC_WORK"])
    (work / "out" / "slurm").mkdir(parents=True)
    (work / "out" / "slurm" / f"eval-{FORGOTTEN}.out").write_text("done\n")
    async with mcp_factory() as mcp:
        found = await mcp("get_job_logs", job_id=FORGOTTEN, job_name="eval")
        assert (found["success"], found["stdout"], found["stderr"]) == (True, "done\n", ""), found
        assert found["log_files"] == [f"out/slurm/eval-{FORGOTTEN}.out"]
