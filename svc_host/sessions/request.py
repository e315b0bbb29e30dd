"""What a start request carries, the same for every face: the kind, its form's fields and the job's resources.

The kind's own model checks ``fields`` (``manage.start``); this model checks the rest, so a bad GPU count or time
limit is refused with the words the submit forms use before anything is written on the cluster.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from svc_host.domain.submission import Resources

_KIND = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_GPUS = re.compile(r"^(?:([A-Za-z0-9_.-]{1,64}):)?(\d{1,4})$")
MAX_FIELDS_JSON = 16_384
"""The most characters a request's ``fields`` may take as JSON (a form, not a file)."""


class SessionRequest(BaseModel):
    """Start a session of ``kind`` with ``fields`` (its form) on a job with these resources."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(max_length=64, description="A session kind (GET /api/session-kinds), e.g. jupyter.")
    fields: dict[str, Any] = Field(default_factory=dict, description="The kind's form, checked by the kind.")
    gpus: str | None = Field(default=None, max_length=70, description="GPUs: N or TYPE:N (1, a100:1).")
    time_limit: str | None = Field(default=None, max_length=64, description="Slurm's forms: 30, 4:00:00, 1-00:00:00.")
    partition: str | None = Field(default=None, max_length=256)
    cpus: int | None = Field(default=None, ge=1, le=4096, description="CPUs for the app (cpus-per-task).")
    memory: str | None = Field(default=None, max_length=64, description="Memory per node, e.g. 16G.")
    start_timeout: int | None = Field(
        default=None,
        ge=5,
        le=86_400,
        description="Seconds from the job's start for the app to answer before the session is ended "
        "(default: the kind's).",
    )

    @field_validator("kind")
    @classmethod
    def _kind_name(cls, value: str) -> str:
        if not _KIND.match(value):
            raise ValueError("a kind name: lowercase letters, digits, '.', '_', '-'")
        return value

    @field_validator("gpus")
    @classmethod
    def _gpu_count(cls, value: str | None) -> str | None:
        if value is not None and not _GPUS.match(value):
            raise ValueError("N or TYPE:N, like 1 or a100:1")
        return value

    @field_validator("fields")
    @classmethod
    def _small_form(cls, value: dict[str, Any]) -> dict[str, Any]:
        import json

        if len(json.dumps(value, default=str)) > MAX_FIELDS_JSON:
            raise ValueError(f"at most {MAX_FIELDS_JSON} characters as JSON")
        return value

    def resources(self) -> Resources:
        """The job's resources (one node, one task): ``ValidationError`` in the submit forms' words when wrong."""
        found = _GPUS.match(self.gpus or "0")
        kind, count = (found.group(1), int(found.group(2))) if found else (None, 0)
        return Resources(
            gpus_per_node=count,
            gpu_type=kind,
            time_limit=self.time_limit,
            partition=self.partition,
            cpus_per_task=self.cpus or 1,
            memory_per_node=self.memory,
        )
