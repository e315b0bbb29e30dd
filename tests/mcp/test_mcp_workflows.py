"""The workflow tools as an agent sees them (``svc mcp`` over real stdio)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

JOBS = [
    {"name": "prep", "command": "echo {{ word }} > prep.out"},
    {"name": "train", "command": ["bash", "-c", "test -f prep.out"], "depends_on": ["prep"], "retry": 1},
]


async def test_tool_hints(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        tools = {tool.name: tool for tool in await mcp("__list__")}
        hints = {
            "create_workflow": (False, True),
            "validate_workflow": (True, False),
            "run_workflow": (False, False),
            "list_workflows": (True, False),
            "get_workflow": (True, False),
        }
        for name, (read_only, destructive) in hints.items():
            assert tools[name].annotations.read_only_hint is read_only, name
            assert tools[name].annotations.destructive_hint is destructive, name
        run = tools["run_workflow"]
        assert run.input_schema["required"] == ["yaml_path"]
        assert run.input_schema["properties"]["wait_seconds"]["default"] == 60.0
        assert "progress" in (run.description or "")


async def test_create_validate_get_list(mcp_factory: Callable[[], Any], svc_home: dict[str, str]) -> None:
    work = Path(svc_home["SVC_WORK"])
    async with mcp_factory() as mcp:
        created = await mcp(
            "create_workflow", name="demo", jobs=JOBS, output_path="flows/demo.yaml", args={"word": "hi"}
        )
        path = work / "flows" / "demo.yaml"
        assert created == {
            "success": True,
            "path": str(path),
            "name": "demo",
            "job_count": 2,
            "job_names": ["prep", "train"],
            "message": f"workflow 'demo' with 2 job(s) written to {path}",
        }
        assert path.read_text().startswith("name: demo\nargs:\n  word: hi\njobs:\n")

        valid = await mcp("validate_workflow", yaml_path="flows/demo.yaml")
        assert valid == {
            "success": True,
            "name": "demo",
            "valid": True,
            "job_count": 2,
            "jobs": [
                {"name": "prep", "depends_on": [], "command": "echo hi > prep.out"},
                {"name": "train", "depends_on": ["prep"], "command": ["bash", "-c", "test -f prep.out"]},
            ],
        }

        got = await mcp("get_workflow", yaml_path=str(path))
        assert got["success"]
        assert (got["name"], got["args"], got["default_project"]) == ("demo", {"word": "hi"}, None)
        assert got["raw_yaml"] == path.read_text()
        assert got["jobs"][1] == {
            "name": "train",
            "depends_on": ["prep"],
            "retry": 1,
            "retry_delay": 60,
            "command": ["bash", "-c", "test -f prep.out"],
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
        }

        for hidden in (".hidden", "node_modules", ".venv", "__pycache__", "deep/.git"):
            (work / hidden).mkdir(parents=True, exist_ok=True)
            (work / hidden / "skip.yaml").write_text(path.read_text())
        (work / "deep" / "other.yml").write_text("name: other\njobs: [{name: x, command: y}]\n")
        (work / "config.yaml").write_text("just: config\n")
        (work / "broken.yaml").write_text("name: [\n")
        listed = await mcp("list_workflows")
        assert listed == {
            "success": True,
            "workflows": [
                {"path": str(work / "deep" / "other.yml"), "name": "other", "job_count": 1, "job_names": ["x"]},
                {"path": str(path), "name": "demo", "job_count": 2, "job_names": ["prep", "train"]},
            ],
            "count": 2,
        }


async def test_invalid_workflows_report_every_problem(mcp_factory: Callable[[], Any], svc_home: dict[str, str]) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "bad.yaml").write_text("name: bad\njobs:\n  - {name: a, command: x, depends_on: [a]}\n  - {name: b}\n")
    async with mcp_factory() as mcp:
        checked = await mcp("validate_workflow", yaml_path="bad.yaml")
        assert checked == {
            "success": True,
            "name": "bad",
            "valid": False,
            "job_count": 2,
            "jobs": [
                {"name": "a", "depends_on": ["afterok:a"], "command": None},
                {"name": "b", "depends_on": [], "command": None},
            ],
            "errors": [
                "line 4: jobs[1]: give 'command' (a regular job) or 'script_path' (a shell job)",
                "jobs: dependency cycle: a -> a",
            ],
        }
        got = await mcp("get_workflow", yaml_path="bad.yaml")
        assert got == {
            "success": False,
            "error": "workflow has 2 problems: line 4: jobs[1]: give 'command' (a regular job) or 'script_path' "
            "(a shell job); jobs: dependency cycle: a -> a",
        }
        duplicate = await mcp(
            "create_workflow", name="d", jobs=[JOBS[0], JOBS[0]], output_path="d.yaml", args={"word": 1}
        )
        assert duplicate == {
            "success": False,
            "error": "jobs[1].name: duplicate job name 'prep' (first defined at jobs[0])",
        }
        assert not (work / "d.yaml").exists()


async def test_paths_are_confined(mcp_factory: Callable[[], Any], svc_home: dict[str, str], tmp_path: Path) -> None:
    work = Path(svc_home["SVC_WORK"])
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "wf.yaml").write_text("name: o\njobs: [{name: a, command: x}]\n")
    (work / "link").symlink_to(outside)
    (work / "notes.yaml").write_text("just: notes\n")
    async with mcp_factory() as mcp:
        for tool, arguments in (
            ("create_workflow", {"name": "x", "jobs": JOBS[:1], "output_path": "/etc/x.yaml", "args": {"word": 1}}),
            ("validate_workflow", {"yaml_path": str(outside / "wf.yaml")}),
            ("get_workflow", {"yaml_path": "link/wf.yaml"}),
            ("run_workflow", {"yaml_path": "../outside/wf.yaml", "dry_run": True}),
            ("list_workflows", {"directory": "/"}),
        ):
            shown = arguments.get("output_path") or arguments.get("yaml_path") or arguments.get("directory")
            assert await mcp(tool, **arguments) == {
                "success": False,
                "error": f"Path '{shown}' is outside allowed directories",
            }, tool
        assert (await mcp("list_workflows", directory="link"))["success"] is False
        replaced = await mcp("create_workflow", name="n", jobs=JOBS[:1], output_path="notes.yaml", args={"word": 1})
        assert replaced["success"] is False
        assert "is not a workflow file (no 'name' and 'jobs'); not replacing it" in replaced["error"]
        assert (work / "notes.yaml").read_text() == "just: notes\n"


async def test_run_errors_have_the_spec_messages(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str], write_profiles: Callable[[dict[str, Any]], None]
) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "wf.yaml").write_text("name: wf\nargs: {x: 1}\njobs:\n  - {name: a, command: 'echo {{ x }}'}\n")
    (work / "shell.yaml").write_text("name: sh\njobs:\n  - {name: a, script_path: /etc/passwd}\n")
    write_profiles(
        {
            "profiles": {
                "dev": {"hostname": "127.0.0.1", "mounts": [{"name": "proj", "local": str(work), "remote": "p"}]}
            }
        }
    )
    async with mcp_factory() as mcp:
        no_transport = await mcp("run_workflow", yaml_path="wf.yaml", mount="proj")
        assert no_transport["success"] is False
        assert no_transport["error"].startswith(
            "mount requires an SSH transport; pass transport='<profile>' (local runs"
        )
        unknown = await mcp("run_workflow", yaml_path="wf.yaml", transport="dev", mount="nope", dry_run=True)
        assert unknown == {"success": False, "error": "Mount 'nope' not found in profile 'dev'"}
        python = await mcp("run_workflow", yaml_path="wf.yaml", args={"x": {"y": ["python:1"]}}, dry_run=True)
        assert python == {
            "success": False,
            "error": "args at 'x.y[0]' contains 'python:' prefix which is not allowed: 'python:1'",
        }
        script = await mcp("run_workflow", yaml_path="shell.yaml", dry_run=True)
        assert script == {"success": False, "error": "Script path '/etc/passwd' is outside allowed directories"}
        sweep = await mcp("run_workflow", yaml_path="wf.yaml", sweep={"matrix": {"x": [1, 2]}}, dry_run=True)
        assert sweep == {
            "success": False,
            "error": "dry_run cannot be combined with sweep: dry_run previews a plain run and a sweep always "
            "executes; drop one of them",
        }
        placed = await mcp("run_workflow", yaml_path="wf.yaml", transport="dev", mount="proj", dry_run=True)
        assert placed == {
            "success": True,
            "dry_run": True,
            "workflow": "wf",
            "jobs_to_execute": [{"name": "a", "depends_on": [], "command": "echo 1"}],
            "count": 1,
        }


async def test_dry_run_previews_the_selection(mcp_factory: Callable[[], Any], svc_home: dict[str, str]) -> None:
    work = Path(svc_home["SVC_WORK"])
    text = "name: chain\njobs:\n  - {name: a, command: x}\n  - {name: b, command: y, depends_on: [a]}\n"
    (work / "chain.yaml").write_text(text + "  - {name: c, script_path: c.sh, depends_on: ['afterany:b']}\n")
    (work / "c.sh").write_text("#!/bin/bash\necho c\n")
    async with mcp_factory() as mcp:
        preview = await mcp("run_workflow", yaml_path="chain.yaml", dry_run=True, from_job="b")
        assert preview == {
            "success": True,
            "dry_run": True,
            "workflow": "chain",
            "jobs_to_execute": [
                {"name": "b", "depends_on": [], "command": "y"},
                {"name": "c", "depends_on": ["afterany:b"], "command": None, "script_path": "c.sh"},
            ],
            "count": 2,
        }
    assert not list(work.glob("logs/*"))  # nothing ran


def _params(svc_home: dict[str, str]) -> StdioServerParameters:
    work = svc_home["SVC_WORK"]
    return StdioServerParameters(
        command=sys.executable, args=["-m", "svc_host", "mcp", "--root", work], env=svc_home, cwd=work
    )


@pytest.mark.cluster
async def test_run_waits_reports_progress_and_completes(svc_home: dict[str, str], slurm_cluster: None) -> None:
    work = Path(svc_home["SVC_WORK"])
    async with Client(_params(svc_home)) as client:
        created = await client.call_tool(
            "create_workflow", {"name": "demo", "jobs": JOBS, "output_path": "demo.yaml", "args": {"word": "hi"}}
        )
        assert created.structured_content is not None
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        result = await client.call_tool(
            "run_workflow", {"yaml_path": "demo.yaml", "args": {"word": "bye"}}, progress_callback=on_progress
        )
        body = result.structured_content
        assert body is not None
        assert body["success"], body
        assert (body["workflow"], body["all_completed"], body["status"], body["run_error"]) == (
            "demo",
            True,
            "completed",
            None,
        )
        assert set(body["results"]) == {"prep", "train"}
        assert {entry["status"] for entry in body["results"].values()} == {"COMPLETED"}
        assert all(entry["job_id"].isdigit() for entry in body["results"].values())
        assert (work / "prep.out").read_text() == "bye\n"
        assert progress
        assert progress[-1][:2] == (2, 2)
        assert all(total == 2 for _, total, _ in progress)


@pytest.mark.cluster
async def test_a_long_run_returns_after_wait_seconds(svc_home: dict[str, str], slurm_cluster: None) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "long.yaml").write_text("name: long\njobs:\n  - {name: a, command: 'sleep 120'}\n")
    async with Client(_params(svc_home)) as client:
        result = await client.call_tool("run_workflow", {"yaml_path": "long.yaml", "wait_seconds": 1})
        body = result.structured_content
        assert body is not None
        try:
            assert body["success"], body
            assert body["all_completed"] is False
            assert body["status"] == "running"
            assert body["results"]["a"]["status"] in {"PENDING", "RUNNING"}
            assert len(body["run_id"]) == 36
        finally:
            await client.call_tool("cancel_job", {"job_id": body["results"]["a"]["job_id"]})
