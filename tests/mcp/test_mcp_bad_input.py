"""Bad tool arguments through ``svc mcp`` over real stdio: every one is ``{success: false, error}`` with a
message that says what is wrong (never a protocol error, never "internal error"), and nothing is written."""

from __future__ import annotations

import resource
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

LAUGHS = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(7)
)


def failed(result: dict[str, Any], words: str) -> None:
    assert result["success"] is False, result
    assert words in result["error"], result
    assert "internal error" not in result["error"]


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"command": "echo hi", "name": "two\nlines"}, "job name must be one line"),
        ({"command": "echo hi", "name": "x" * 201}, "at most 200 characters"),
        ({"command": "echo \0"}, "NUL"),
        ({"command": "echo hi", "env_vars": {"A": "a\0b"}}, "NUL"),
        ({"command": "echo hi", "env_vars": {"-Secho INJECTED #": "x"}}, "shell identifiers"),
        ({"command": "echo hi", "nodes": 10**30}, "less than or equal to 1000000"),
        ({"command": "echo hi", "conda": "env\nrm -rf ~"}, "line breaks"),
    ],
)
async def test_submit_job_refuses_bad_fields(
    mcp_factory: Callable[[], Any], arguments: dict[str, Any], words: str
) -> None:
    async with mcp_factory() as mcp:
        failed(await mcp("submit_job", **arguments), words)


async def test_job_ids_and_partitions_are_checked(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        for job_id in ("0", "99999999999999999999", "-1", "12;rm", "1" * 5000):
            failed(await mcp("get_job_status", job_id=job_id), "job_id must be digits or '<id>_<index>'")
            failed(await mcp("cancel_job", job_id=job_id), "job_id must be digits or '<id>_<index>'")
        failed(await mcp("get_job_logs", job_id="0"), "job_id must be digits or '<id>_<index>'")
        failed(await mcp("get_resources", partition="gpu;reboot"), "partition must be a Slurm partition name")
        failed(await mcp("get_resources", partition="a\0"), "partition must be a Slurm partition name")


async def test_workflow_tools_survive_yaml_bombs(mcp_factory: Callable[[], Any], svc_home: dict[str, str]) -> None:
    work = Path(svc_home["SVC_WORK"])
    (work / "laughs.yaml").write_text(LAUGHS)
    (work / "loop.yaml").write_text("name: r\njobs: &a [*a]\n")
    (work / "deep.yaml").write_text("x: " + "[" * 5000 + "]" * 5000 + "\n")
    (work / "ctrl.yaml").write_text("name: a\x01\njobs: []\n")
    before = children_cpu_seconds()
    async with mcp_factory() as mcp:
        checks = [
            ("laughs.yaml", "more than 200000 nodes"),
            ("loop.yaml", "an alias refers to a node that contains it"),
            ("deep.yaml", "nested more than 50 levels deep"),
            ("ctrl.yaml", "character U+0001 is not allowed"),
        ]
        for name, words in checks:
            result = await mcp("validate_workflow", yaml_path=name)
            assert result["success"] is True, result
            assert result["valid"] is False, result
            assert any(words in error for error in result["errors"]), result
            failed(await mcp("get_workflow", yaml_path=name), words)
            failed(await mcp("run_workflow", yaml_path=name, dry_run=True), words)
        listed = await mcp("list_workflows")
        assert listed["success"] is True
    used = children_cpu_seconds() - before  # the server's, started and ended above: its work, not the machine's load
    assert 0 < used < 30


def children_cpu_seconds() -> float:
    """CPU seconds of this process's ended children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def test_create_workflow_refuses_nul_and_deep_args(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str]
) -> None:
    work = Path(svc_home["SVC_WORK"])
    deep: Any = "x"
    for _ in range(100):  # deeper than svc allows, shallower than the 128 levels the MCP SDK's JSON parser reads
        deep = [deep]
    async with mcp_factory() as mcp:
        failed(
            await mcp("create_workflow", name="w", jobs=[{"name": "a", "command": "echo \0"}], output_path="w.yaml"),
            "NUL",
        )
        failed(
            await mcp(
                "create_workflow",
                name="w",
                jobs=[{"name": "a", "command": "echo"}],
                output_path="w.yaml",
                args={"x": deep},
            ),
            "nested more than 50 levels deep",
        )
        assert not (work / "w.yaml").exists()


async def test_templates_and_sweeps_are_bounded(mcp_factory: Callable[[], Any], svc_home: dict[str, str]) -> None:
    work = Path(svc_home["SVC_WORK"])
    bomb = "{{ x" + "|replace('a', x)" * 12 + " }}"
    (work / "bomb.yaml").write_text(f'name: b\nargs:\n  x: "{"a" * 100}"\njobs:\n  - name: a\n    command: "{bomb}"\n')
    jobs = "".join(f"  - name: j{i}\n    command: echo {{{{ lr }}}}\n" for i in range(20))
    (work / "twenty.yaml").write_text(f"name: twenty\nargs:\n  lr: 1\njobs:\n{jobs}")
    async with mcp_factory() as mcp:
        result = await mcp("validate_workflow", yaml_path="bomb.yaml")
        assert result["valid"] is False
        assert any("replace would build more than 1000000 characters" in e for e in result["errors"]), result
        sweep = {"matrix": {"lr": list(range(1000))}}
        failed(
            await mcp("run_workflow", yaml_path="twenty.yaml", sweep=sweep),
            "1000 cells x 20 jobs = 20000 jobs; at most 10000 jobs per sweep",
        )
        failed(
            await mcp("run_workflow", yaml_path="twenty.yaml", sweep={"matrix": {"lr": [1]}, "max_parallel": 10**20}),
            "invalid sweep spec",
        )
