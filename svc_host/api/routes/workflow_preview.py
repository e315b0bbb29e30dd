"""``POST /api/workflows/preview``: what a workflow text holds and what a run of it would submit, writing nothing.

The dashboard's editor and visual builder work on unsaved text: this answers the parsed document (the YAML as
JSON, templates left as written, so the builder can edit it and write the same YAML back), the problems
``/validate`` would report, the topological order, and the dry run's ``jobs_to_execute`` for an optional
``from_job``/``to_job``/``single_job`` selection (its problems in ``selection_errors``, apart from the file's).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from svc_host.errors import WorkflowError
from svc_host.workflows.dag import select, topological_order
from svc_host.workflows.load import MAX_WORKFLOW_BYTES, check_workflow
from svc_host.workflows.source import YamlSyntaxError, parse

router = APIRouter(prefix="/api/workflows", tags=["workflows"])


class PreviewBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    yaml: str = Field(max_length=MAX_WORKFLOW_BYTES)
    args: dict[str, Any] | None = None
    from_job: str | None = Field(None, max_length=64)
    to_job: str | None = Field(None, max_length=64)
    single_job: str | None = Field(None, max_length=64)


def preview(body: PreviewBody) -> dict[str, Any]:
    """The answer of ``POST /api/workflows/preview`` (pure: parsing and graph work only)."""
    workflow, problems = check_workflow(body.yaml, args=body.args)
    answer: dict[str, Any] = {
        "valid": workflow is not None and not problems,
        "errors": problems,
        "document": None,
        "order": None,
        "jobs_to_execute": None,
        "selection_errors": [],
    }
    try:
        parsed = parse(body.yaml)
        if not parsed.fatal and isinstance(parsed.data, dict):
            answer["document"] = parsed.data
    except YamlSyntaxError:
        pass  # already in ``errors``
    if workflow is None or problems:
        return answer
    answer["order"] = topological_order(workflow.jobs)
    try:
        chosen = select(workflow, from_job=body.from_job, to_job=body.to_job, single_job=body.single_job)
    except WorkflowError as exc:
        answer["selection_errors"] = exc.problems
        return answer
    answer["jobs_to_execute"] = [
        {"name": item.job.name, "depends_on": item.depends_on, "command": item.job.command} for item in chosen
    ]
    return answer


@router.post("/preview")
async def preview_workflow(body: PreviewBody) -> dict[str, Any]:
    """``{valid, errors, document, order, jobs_to_execute, selection_errors}`` for a workflow text: nothing is
    saved or submitted; ``jobs_to_execute`` is the dry run of the selection (null while the text is invalid)."""
    return await asyncio.to_thread(preview, body)
