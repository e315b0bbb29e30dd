"""The workflow file as pydantic models: unknown keys are errors, never silently ignored.

A workflow is ``name``, ``args`` (template variables), ``default_project`` (a mount name) and ``jobs``.
A job runs a ``command`` (a shell line or an argv list) or a ``script_path`` (a batch script file: a
"shell job"), after the jobs named in ``depends_on``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from svc_host.domain.profiles import MOUNT_NAME_PATTERN
from svc_host.domain.submission import Environment, Resources
from svc_host.domain.validation_words import worded_pattern
from svc_host.workflows.retries import Escalate, OnInterruption, RetryPolicy

JOB_NAME_PATTERN = worded_pattern(r"^[A-Za-z0-9_-]{1,64}$", "1-64 letters, digits, '-' or '_'")
"""Job names: letters, digits, ``-`` and ``_`` (they become Slurm job names and log file stems)."""
DependencyType = Literal["afterok", "after", "afterany", "afternotok"]
DEPENDENCY_TYPES: tuple[DependencyType, ...] = ("afterok", "after", "afterany", "afternotok")
DEFAULT_DEPENDENCY: DependencyType = "afterok"
MAX_RETRY = 100
MAX_RETRY_DELAY = 7 * 24 * 3600

_ENTRY = re.compile(r"^(?:(?P<type>[A-Za-z]+):)?(?P<job>[^:]*)$")


@dataclass(frozen=True)
class Dependency:
    """One ``depends_on`` entry: run after ``job`` according to ``type`` (Slurm's dependency types)."""

    type: DependencyType
    job: str

    @classmethod
    def parse(cls, entry: str) -> Dependency:
        """``"prep"`` (``afterok``) or ``"<type>:prep"``; ``ValueError`` naming the problem."""
        match = _ENTRY.match(entry.strip())
        if match is None:
            raise ValueError(f"{entry!r} is not '<job>' or '<type>:<job>'")
        kind, job = match.group("type"), match.group("job")
        if kind is not None and kind not in DEPENDENCY_TYPES:
            raise ValueError(
                f"unknown dependency type {kind!r} in {entry!r}; use one of: {', '.join(DEPENDENCY_TYPES)}"
            )
        if not re.match(JOB_NAME_PATTERN, job):
            raise ValueError(f"{entry!r} does not name a job (letters, digits, '-' and '_')")
        return cls(type=kind or DEFAULT_DEPENDENCY, job=job)

    def __str__(self) -> str:
        return f"{self.type}:{self.job}"


class WorkflowJob(BaseModel):
    """One job of a workflow (the spec's "Workflow job definition")."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=JOB_NAME_PATTERN)
    command: str | list[str] | None = None
    script_path: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    retry: int = Field(default=0, ge=0, le=MAX_RETRY)
    """Opt-in retries of an attempt that ended ``FAILED`` (or ``DEADLINE``), each after ``retry_delay`` seconds."""
    retry_delay: int = Field(default=60, ge=0, le=MAX_RETRY_DELAY)
    on_interruption: OnInterruption = Field(default_factory=OnInterruption)
    """Automatic retries of ``NODE_FAIL``, ``BOOT_FAIL`` and ``PREEMPTED`` attempts (see ``retries``)."""
    escalate: Escalate = Field(default_factory=Escalate)
    """The rules that retry ``OUT_OF_MEMORY`` and ``TIMEOUT`` attempts with more memory or time."""
    resources: Resources = Field(default_factory=Resources)
    """Only the fields set here override the configured defaults (``model_fields_set``)."""
    environment: Environment = Field(default_factory=Environment)
    log_dir: str | None = None
    work_dir: str | None = None
    renderer: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    """This job's renderer; else the workflow's ``renderer``, else the configuration's ``rendering.renderer``."""

    @field_validator("depends_on")
    @classmethod
    def _entries(cls, value: list[str]) -> list[str]:
        seen: dict[str, str] = {}
        for entry in value:
            dependency = Dependency.parse(entry)
            if dependency.job in seen:
                raise ValueError(f"depends on {dependency.job!r} twice ({seen[dependency.job]!r} and {entry!r})")
            seen[dependency.job] = entry
        return value

    @field_validator("command")
    @classmethod
    def _command(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, str) and not value.strip():
            raise ValueError("command may not be empty")
        if isinstance(value, list) and not value:
            raise ValueError("command may not be an empty list")
        words = [value] if isinstance(value, str) else list(value or [])
        if any("\0" in word for word in words):
            raise ValueError("command may not contain a NUL byte (a shell script cannot hold one)")
        return value

    @field_validator("script_path", "log_dir", "work_dir")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or any(ch in value for ch in "\0\n\r")):
            raise ValueError("path must be non-empty and may not contain newlines or NUL")
        return value

    @model_validator(mode="after")
    def _command_or_script(self) -> WorkflowJob:
        if self.command is not None and self.script_path is not None:
            raise ValueError("give 'command' or 'script_path', not both")
        if self.command is None and self.script_path is None:
            raise ValueError("give 'command' (a regular job) or 'script_path' (a shell job)")
        return self

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(retry=self.retry, on_interruption=self.on_interruption, escalate=self.escalate)

    @property
    def dependencies(self) -> list[Dependency]:
        return [Dependency.parse(entry) for entry in self.depends_on]

    @property
    def command_words(self) -> list[str]:
        """The command as the REST Job shape shows it: an argv list (a shell line is one word)."""
        if isinstance(self.command, list):
            return list(self.command)
        return [self.command] if self.command is not None else []


class Workflow(BaseModel):
    """A workflow file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    args: dict[str, Any] = Field(default_factory=dict)
    default_project: str | None = Field(default=None, pattern=MOUNT_NAME_PATTERN)
    renderer: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    """The renderer of every job that names none; else the configuration's ``rendering.renderer``."""
    jobs: list[WorkflowJob] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if any(ch in value for ch in "\0\n\r") or not value.strip():
            raise ValueError("name must be one non-blank line")
        return value

    def job(self, name: str) -> WorkflowJob:
        for job in self.jobs:
            if job.name == name:
                return job
        raise KeyError(name)

    def to_document(self) -> dict[str, Any]:
        """The workflow as a YAML document: only what was given (defaults are left out)."""
        document: dict[str, Any] = {"name": self.name}
        if self.args:
            document["args"] = self.args
        if self.default_project is not None:
            document["default_project"] = self.default_project
        if self.renderer is not None:
            document["renderer"] = self.renderer
        document["jobs"] = [job.model_dump(mode="json", exclude_unset=True) for job in self.jobs]
        return document
