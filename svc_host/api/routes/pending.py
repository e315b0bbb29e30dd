"""``/api/jobs/{job_id}/pending`` (why a job waits, when it should start) and ``/api/jobs/test`` (would a job
fit now, and where: ``sbatch --test-only``). Not in the REST spec; docs/interfaces.md, "Why pending"."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from svc_host.api.cluster import ClusterDep
from svc_host.api.deps import HostDep
from svc_host.api.params import JobId, error_responses
from svc_host.api.routes.jobs import SubmitJob, definition_of
from svc_host.services import pending

router = APIRouter(prefix="/api/jobs", tags=["jobs"])


class Limit(BaseModel):
    """The limit a pending job waits on."""

    scope: str
    """``qos``, ``association``, ``partition``, ``nodes`` or ``dependency``."""
    name: str
    field: str
    value: str
    used: str | None


class StartEstimate(BaseModel):
    """When and where Slurm expects the job to start (``at`` null: Slurm gives no time)."""

    at: str | None
    nodes: str | None
    partition: str | None
    processors: int | None


class PendingAnswer(BaseModel):
    """Why a job is pending, in a sentence, with the binding limit and the start estimate."""

    job_id: str
    pending: bool
    status: str
    reason: str | None
    explanation: str
    needs_action: bool
    limit: Limit | None
    start_estimate: StartEstimate | None


class FitAnswer(BaseModel):
    """Would the job start if submitted now, and where; ``refusal`` is Slurm's word when it would not accept it."""

    fits: bool
    explanation: str
    start_estimate: StartEstimate | None
    refusal: str | None


@router.get("/{job_id}/pending", response_model=PendingAnswer, responses=error_responses(400, 404, 422, 502, 503))
async def why_pending(host: HostDep, job_id: JobId, transport: ClusterDep) -> dict[str, Any]:
    """Why the job is pending, naming the limit and the value that binds, and when Slurm expects it to start. A job
    that is not pending is answered too (``pending: false``)."""
    answers = await pending.explain(host, transport, [job_id])
    return answers[0]


@router.post("/test", response_model=FitAnswer, responses=error_responses(422, 500, 502, 503))
async def fit_answer(body: SubmitJob, host: HostDep, transport: ClusterDep) -> dict[str, Any]:
    """Would this job (the body of ``POST /api/jobs``) start now, and where? Nothing is submitted: the script is
    given to ``sbatch --test-only``. A job Slurm would refuse, or keep pending for ever, is ``fits: false``."""
    return await pending.fit_answer(host, definition_of(body, host), transport=transport)
