"""MCP workflow tools with templates past their limits (issue 26, N12/N13): ``{success: false, error}`` or
``valid: false`` in words, never an internal error, nothing written, and ``list_workflows`` still lists."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

NESTED = "{{ " + "(" * 70 + "a" + ")" * 70 + " }}"
BIG = "{{ a }}{% if a %}-{% endif %}" * (200_000 // 29)
BAD = {"nested.yaml": (NESTED, "nested more than 20 levels"), "big.yaml": (BIG, "a template is at most 65536")}


def failed(result: dict[str, Any], words: str) -> None:
    assert result["success"] is False, result
    assert words in result["error"], result
    assert "internal error" not in result["error"]


async def test_workflow_tools_answer_bad_templates_in_words(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str]
) -> None:
    work = Path(svc_home["SVC_WORK"])
    for name, (template, _) in BAD.items():
        (work / name).write_text(
            f"name: {name[:-5]}\nargs: {{a: 1}}\njobs:\n  - name: a\n    command: {json.dumps(template)}\n"
        )
    async with mcp_factory() as mcp:
        for name, (template, words) in BAD.items():
            result = await mcp("validate_workflow", yaml_path=name)
            assert result["success"] is True, result
            assert result["valid"] is False, result
            assert any(words in error for error in result["errors"]), result
            failed(await mcp("get_workflow", yaml_path=name), words)
            failed(await mcp("run_workflow", yaml_path=name, dry_run=True), words)
            created = await mcp(
                "create_workflow",
                name="made",
                jobs=[{"name": "a", "command": template}],
                args={"a": 1},
                output_path="made.yaml",
            )
            failed(created, words)
        assert not (work / "made.yaml").exists()
        listed = await mcp("list_workflows")
        assert listed["success"] is True, listed
        assert {Path(item["path"]).name for item in listed["workflows"]} >= set(BAD)
