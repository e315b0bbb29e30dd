"""Arguments the tools' schemas refuse (missing, unknown, wrong type, out of range) come back through the real stdio
client as the spec's ``{success: false, error}`` naming the argument, never as the SDK's ``isError`` text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc_host.mcp.results import describe_arguments

# tool -> (arguments without a required one, the error), (arguments with one of the wrong type, the error)
CASES: dict[str, list[tuple[dict[str, Any], str]]] = {
    "submit_job": [
        ({"name": "x"}, "submit_job: missing required argument 'command'"),
        (
            {"command": "true", "nodes": "many"},
            "submit_job: argument 'nodes': Input should be a valid integer, unable to parse string as an integer "
            "(got string)",
        ),
    ],
    "list_jobs": [({"transport": 5}, "list_jobs: argument 'transport': Input should be a valid string (got number)")],
    "get_job_status": [
        ({}, "get_job_status: missing required argument 'job_id'"),
        ({"job_id": [1]}, "get_job_status: argument 'job_id': Input should be a valid string (got array)"),
    ],
    "cancel_job": [
        ({"transport": "local"}, "cancel_job: missing required argument 'job_id'"),
        ({"job_id": {"id": 1}}, "cancel_job: argument 'job_id': Input should be a valid string (got object)"),
    ],
    "get_job_logs": [
        ({"tail_lines": 3}, "get_job_logs: missing required argument 'job_id'"),
        (
            {"job_id": "1", "tail_lines": "last"},
            "get_job_logs: argument 'tail_lines': Input should be a valid integer, unable to parse string as an "
            "integer (got string)",
        ),
    ],
    "explain_pending": [
        ({"transport": "local"}, "explain_pending: missing required argument 'job_id'"),
        ({"job_id": 5}, "explain_pending: argument 'job_id': Input should be a valid string (got number)"),
    ],
    "get_resources": [
        ({"partition": 3}, "get_resources: argument 'partition': Input should be a valid string (got number)")
    ],
    "get_efficiency": [
        (
            {"sweep_run_id": 0},
            "get_efficiency: argument 'sweep_run_id': Input should be greater than or equal to 1 (got number)",
        )
    ],
    "get_limits": [({"transport": 3}, "get_limits: argument 'transport': Input should be a valid string (got number)")],
    "create_workflow": [
        (
            {"name": "w", "output_path": "w.yaml"},
            "create_workflow: missing required argument 'jobs'",
        ),
        (
            {"name": "w", "jobs": "a", "output_path": "w.yaml"},
            "create_workflow: argument 'jobs': Input should be a valid list (got string)",
        ),
    ],
    "validate_workflow": [
        ({}, "validate_workflow: missing required argument 'yaml_path'"),
        ({"yaml_path": 7}, "validate_workflow: argument 'yaml_path': Input should be a valid string (got number)"),
    ],
    "run_workflow": [
        ({"dry_run": True}, "run_workflow: missing required argument 'yaml_path'"),
        (
            {"yaml_path": "w.yaml", "dry_run": [1]},
            "run_workflow: argument 'dry_run': Input should be a valid boolean (got array)",
        ),
    ],
    "wait_workflow_run": [
        (
            {"sweep_run_id": "latest"},
            "wait_workflow_run: argument 'sweep_run_id': Input should be a valid integer, unable to parse string "
            "as an integer (got string)",
        )
    ],
    "wait_for_change": [
        (
            {"run_id": "r1", "timeout_seconds": "soon"},
            "wait_for_change: argument 'timeout_seconds': Input should be a valid number, unable to parse string as "
            "a number (got string)",
        )
    ],
    "steer_sweep": [
        ({"action": "pause"}, "steer_sweep: missing required argument 'sweep_run_id'"),
        (
            {"sweep_run_id": 1, "action": "stop"},
            "steer_sweep: argument 'action': Input should be 'pause' or 'resume' (got string)",
        ),
    ],
    "list_workflows": [
        ({"directory": ["."]}, "list_workflows: argument 'directory': Input should be a valid string (got array)")
    ],
    "get_workflow": [
        ({}, "get_workflow: missing required argument 'yaml_path'"),
        ({"yaml_path": None}, "get_workflow: argument 'yaml_path': Input should be a valid string (got null)"),
    ],
    "inspect_mount": [
        ({"mount": "proj"}, "inspect_mount: missing required argument 'transport'"),
        (
            {"transport": "dev", "mount": "proj", "max_paths": "lots"},
            "inspect_mount: argument 'max_paths': Input should be a valid integer, unable to parse string as an "
            "integer (got string)",
        ),
    ],
    "start_session": [
        ({"fields": {"command": "true"}}, "start_session: missing required argument 'kind'"),
        (
            {"kind": "command", "fields": "true"},
            "start_session: argument 'fields': Input should be a valid dictionary (got string)",
        ),
    ],
    "list_sessions": [
        ({"transport": 3}, "list_sessions: argument 'transport': Input should be a valid string (got number)")
    ],
    "stop_session": [
        ({"transport": "local"}, "stop_session: missing required argument 'job_id'"),
        ({"job_id": 7}, "stop_session: argument 'job_id': Input should be a valid string (got number)"),
    ],
    "sync_files": [
        ({"transport": "dev"}, "sync_files: missing required argument 'mount'"),
        (
            {"transport": "dev", "mount": "proj", "delete": "maybe"},
            "sync_files: argument 'delete': Input should be a valid boolean, unable to interpret input (got string)",
        ),
    ],
}
WITHOUT_PARAMETERS = {"get_config", "list_ssh_profiles"}  # plus plugins' parameterless tools


async def test_every_tool_answers_bad_arguments_in_the_spec_shape(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        tools = {tool.name: tool for tool in await mcp("__list__")}
        assert set(CASES) | WITHOUT_PARAMETERS <= set(tools)
        for name in set(tools) - set(CASES):  # a new tool with parameters (a plugin's too) needs cases here
            assert tools[name].input_schema.get("properties", {}) == {}, name
        for name, cases in CASES.items():
            if tools[name].input_schema.get("required"):
                assert len(cases) == 2, f"{name} has required arguments: test one missing"
            for arguments, error in cases:
                assert await mcp(name, **arguments) == {"success": False, "error": error}, (name, arguments)


async def test_every_refused_argument_is_named_at_once(mcp_factory: Callable[[], Any]) -> None:
    async with mcp_factory() as mcp:
        result = await mcp("submit_job", nodes=[2], env_vars={"A": 1}, gpus_per_node=-1.5)
        assert result == {
            "success": False,
            "error": "submit_job: missing required argument 'command'; argument 'nodes': Input should be a valid "
            "integer (got array); argument 'gpus_per_node': Input should be a valid integer, got a number with a "
            "fractional part (got number); argument 'env_vars.A': Input should be a valid string (got number)",
        }
        ranges = await mcp("get_job_logs", job_id="1", tail_bytes=10**9)
        assert ranges == {
            "success": False,
            "error": "get_job_logs: argument 'tail_bytes': Input should be less than or equal to 262144 (got number)",
        }
        far = await mcp("get_job_logs", job_id="1", offset=2**64)
        assert far == {
            "success": False,
            "error": "get_job_logs: argument 'offset': Input should be less than or equal to 9007199254740991 "
            "(got number)",
        }
        huge = await mcp("wait_workflow_run", sweep_run_id=2**63)
        assert huge["error"].startswith("wait_workflow_run: argument 'sweep_run_id': Input should be less than")
        both = await mcp("get_job_logs", job_id="1", offset=10, tail_lines=5)
        assert both == {
            "success": False,
            "error": "give at most one of offset, tail_bytes and tail_lines, got offset and tail_lines",
        }
        misspelt = await mcp("run_workflow", yaml_path="w.yaml", dryrun=True, run_id="x")
        assert misspelt == {
            "success": False,
            "error": "run_workflow: unknown arguments 'dryrun', 'run_id' (it takes yaml_path, from_job, to_job, "
            "single_job, dry_run, args, sweep, transport, mount, wait_seconds)",
        }
        assert await mcp("get_config", verbose=True) == {
            "success": False,
            "error": "get_config: unknown argument 'verbose' (it takes no arguments)",
        }
        neither = await mcp("wait_workflow_run")
        assert neither == {
            "success": False,
            "error": "give exactly one of run_id (a workflow run, as run_workflow returned it) and sweep_run_id "
            "(a sweep)",
        }
        unknown = await mcp("wait_workflow_run", run_id="no-such-run", wait_seconds=0)
        assert unknown == {"success": False, "error": "workflow run 'no-such-run' not found"}


def test_list_items_and_nested_keys_are_located() -> None:
    errors = [{"type": "string_type", "loc": ("jobs", 1, "name"), "msg": "Input should be a valid string", "input": 3}]
    assert describe_arguments("t", errors) == "t: argument 'jobs[1].name': Input should be a valid string (got number)"
