"""Load and validate a workflow: every problem at once, each with where it is.

Order: YAML syntax (fatal: nothing else can be checked) -> document shape -> ``python:`` values in
``args`` -> ``args`` rendered into the jobs -> the schema -> duplicate names, unknown dependencies and
cycles. A problem in one job never hides another job's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from svc_host.errors import WorkflowError
from svc_host.workflows.dag import graph_problems, raw_jobs
from svc_host.workflows.model import Workflow
from svc_host.workflows.source import Parsed, YamlSyntaxError, nesting_problem, parse
from svc_host.workflows.source import Path as DocPath
from svc_host.workflows.templating import RenderBudget, python_problems, render_tree

MAX_WORKFLOW_BYTES = 1024 * 1024
"""Workflow files are at most 1 MB (REST upload answers 413 above it; readers refuse larger files)."""


def load_workflow(text: str, *, args: Mapping[str, Any] | None = None) -> Workflow:
    """The validated workflow in ``text`` with ``args`` merged over the file's own before rendering.

    Raises:
        WorkflowError: with every problem found.
    """
    workflow, problems = check_workflow(text, args=args)
    if workflow is None or problems:
        raise WorkflowError(problems)
    return workflow


def check_workflow(text: str, *, args: Mapping[str, Any] | None = None) -> tuple[Workflow | None, list[str]]:
    """``(workflow, [])`` when valid, else ``(workflow or None, problems)``."""
    if len(text.encode(errors="surrogatepass")) > MAX_WORKFLOW_BYTES:
        return None, [f"the workflow is larger than {MAX_WORKFLOW_BYTES} bytes"]
    try:
        parsed = parse(text)
    except YamlSyntaxError as exc:
        return None, [str(exc)]
    if parsed.fatal:
        return None, list(parsed.problems)
    return check_document(parsed.data, args=args, parsed=parsed)


def check_document(
    document: Any, *, args: Mapping[str, Any] | None = None, parsed: Parsed | None = None
) -> tuple[Workflow | None, list[str]]:
    """``check_workflow`` for data that did not come from YAML text (REST create): locations are paths only."""
    if parsed is None:
        deep = nesting_problem(document, "workflow")
        if deep is not None:
            return None, [deep]
    parsed = parsed or Parsed(data=document)
    problems = list(parsed.problems)
    if not isinstance(document, dict):
        kind = "empty" if document is None else f"a {type(document).__name__}"
        return None, [*problems, f"the workflow must be a mapping with 'name' and 'jobs', not {kind}"]
    merged, arg_problems = merge_args(document.get("args"), args, parsed)
    problems += arg_problems
    rendered = dict(document)
    if merged is not None:
        rendered["args"] = merged

        def problem(path: DocPath, message: str) -> None:
            problems.append(f"{parsed.where(path)}: {message}")

        budget = RenderBudget()
        for key in ("jobs", "default_project"):
            if key in document:
                rendered[key] = render_tree(document[key], merged, (key,), problem, budget)
    workflow: Workflow | None = None
    try:
        workflow = Workflow.model_validate(rendered)
    except ValidationError as exc:
        problems += schema_problems(exc, parsed)
    problems += graph_problems(raw_jobs(rendered.get("jobs")), parsed)
    return workflow, _capped(problems)


MAX_PROBLEMS = 100
"""Problems reported at most (a document of 100,000 aliased bad jobs must not make a 20 MB answer)."""


def _capped(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return [*problems[:MAX_PROBLEMS], f"... and {len(problems) - MAX_PROBLEMS} more problems"]


def merge_args(
    file_args: Any, call_args: Mapping[str, Any] | None, parsed: Parsed | None = None
) -> tuple[dict[str, Any] | None, list[str]]:
    """The file's ``args`` with ``call_args`` laid over them, and the problems of both (``python:`` values)."""
    problems: list[str] = []
    if file_args is None:
        file_args = {}
    if not isinstance(file_args, dict):
        where = parsed.where(("args",)) if parsed else "args"
        return None, [f"{where}: must be a mapping of names to values"]
    problems += python_problems("args", file_args)
    if call_args is not None:
        if not isinstance(call_args, Mapping):
            return None, [*problems, "args: must be a mapping of names to values"]
        deep = nesting_problem(dict(call_args), "args")
        if deep is not None:
            return None, [*problems, deep]
        problems += python_problems("args", dict(call_args))
    merged = {**file_args, **dict(call_args or {})}
    bad = [name for name in merged if not str(name).isidentifier()]
    if bad:
        problems.append(f"args: names must be identifiers usable in templates: {', '.join(map(repr, bad))}")
    return merged, problems


def schema_problems(exc: ValidationError, parsed: Parsed) -> list[str]:
    """Pydantic's errors as ``line N: jobs[1].retry: <message>``."""
    problems = []
    for error in exc.errors():
        path = tuple(part for part in error["loc"] if isinstance(part, str | int))
        path = _without_union_tags(path)
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        problems.append(f"{parsed.where(path)}: {message}" if path else message)
    return problems


def _without_union_tags(path: DocPath) -> DocPath:
    """Pydantic adds the union member to a location (``command.str``, ``command.list[str]``); drop it."""
    tags = {"str", "list[str]", "int", "function-after[_command(), union[str,list[str]]]"}
    return tuple(
        part for part in path if not (isinstance(part, str) and (part in tags or part.startswith("function-")))
    )
