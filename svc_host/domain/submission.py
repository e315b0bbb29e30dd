"""What a user asks to run: resources, environment and the job definition handed to a renderer."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

JOB_NAME_MAX = 200
MAX_COUNT = 1_000_000
"""Upper bound of node, task, CPU and GPU counts: far above any cluster, far below what overflows a store."""
MAX_SCRIPT_CHARS = 1_000_000
"""A batch script (or a command line) is at most this long: sbatch itself refuses scripts of a few MB."""
NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"
"""One line without control characters (a job name becomes an ``#SBATCH`` word and a log file stem)."""
NO_NUL = r"^[^\x00]*$"
"""Text a shell can hold: anything but NUL."""


def _without_nul(value: str | None, what: str) -> str | None:
    if value is not None and "\0" in value:
        raise ValueError(f"{what} may not contain a NUL byte (a shell script cannot hold one)")
    return value


def _one_line(value: str | None, what: str) -> str | None:
    if value is not None and any(ch in value for ch in "\0\r\n"):
        raise ValueError(f"{what} may not contain line breaks or NUL")
    return value


class Resources(BaseModel):
    """The eight resource fields of the specs, plus ``gpu_type``; unset optional fields leave Slurm's defaults alone."""

    model_config = ConfigDict(extra="forbid")

    nodes: int = Field(default=1, ge=1, le=MAX_COUNT)
    gpus_per_node: int = Field(default=0, ge=0, le=MAX_COUNT)
    ntasks_per_node: int = Field(default=1, ge=1, le=MAX_COUNT)
    cpus_per_task: int = Field(default=1, ge=1, le=MAX_COUNT)
    memory_per_node: str | None = Field(default=None, max_length=64)
    time_limit: str | None = Field(default=None, max_length=64)
    partition: str | None = Field(default=None, max_length=256)
    nodelist: str | None = Field(default=None, max_length=10_000)
    gpu_type: str | None = Field(default=None, max_length=64, exclude=True)
    """The type the ``gpus_per_node`` GPUs must be (``a100``, a MIG slice ``a100_3g.20gb``): ``--gres=gpu:TYPE:N``.
    A request-time field: left out of dumps, so the configuration object and stored resources keep the specs'
    eight fields (the rendered script records the type)."""

    @field_validator("memory_per_node")
    @classmethod
    def _memory(cls, value: str | None) -> str | None:
        return _matching(value, _MEMORY, "like 16G, 500M or 64000 (megabytes)")

    @field_validator("time_limit")
    @classmethod
    def _time(cls, value: str | None) -> str | None:
        return _matching(value, _TIME, "like 30, 4:00:00 or 1-00:00:00")

    @field_validator("partition")
    @classmethod
    def _partition(cls, value: str | None) -> str | None:
        return _matching(value, _PARTITION, "a partition name (letters, digits, '.', '_', '-')")

    @field_validator("gpu_type")
    @classmethod
    def _gpu_type(cls, value: str | None) -> str | None:
        return _matching(value, _GPU_TYPE, "a GPU type as the cluster names it, such as a100 or a100_3g.20gb")

    @model_validator(mode="after")
    def _typed_gpus_are_counted(self) -> Resources:
        if self.gpu_type is not None and self.gpus_per_node == 0:
            raise ValueError(f"gpu_type {self.gpu_type!r} needs gpus_per_node of 1 or more")
        return self

    @field_validator("nodelist")
    @classmethod
    def _nodelist(cls, value: str | None) -> str | None:
        return _matching(value, _NODELIST, "comma-separated node names such as node01,node[02-04]")


_MEMORY = re.compile(r"^\d+[KMGT]?B?$", re.IGNORECASE)
_JOB = r"[1-9][0-9]*(_(0|[1-9][0-9]*))?"
_DEPENDENCY = rf"^(after(ok|any|notok)?:{_JOB}(:{_JOB})*)(,after(ok|any|notok)?:{_JOB}(:{_JOB})*)*$"
"""Job ids in ASCII digits without leading zeros (a pydantic pattern's ``\\d`` takes any script's digits)."""
_TIME = re.compile(r"^(\d+-)?\d+(:\d{1,2}){0,2}$|^UNLIMITED$|^INFINITE$")
_PARTITION = re.compile(r"^[A-Za-z0-9_.-]+$")
_GPU_TYPE = re.compile(r"^[A-Za-z0-9_.-]+$")
_NODELIST = re.compile(r"^[A-Za-z0-9_.,\[\]-]+$")


def _matching(value: str | None, pattern: re.Pattern[str], shape: str) -> str | None:
    if value is not None and not pattern.match(value):
        raise ValueError(
            f"must look {shape}, got {value!r}" if shape.startswith("like") else f"must be {shape}, got {value!r}"
        )
    return value


class Environment(BaseModel):
    """How the job's shell is prepared before the command runs."""

    model_config = ConfigDict(extra="forbid")

    conda: str | None = None
    venv: str | None = None
    container: str | None = None
    env_vars: dict[str, str] = Field(default_factory=dict)
    """Values may hold anything but NUL (newlines and shell metacharacters included): they are quoted for bash."""

    @field_validator("conda", "venv", "container")
    @classmethod
    def _single_line(cls, value: str | None) -> str | None:
        return _one_line(value, "conda, venv and container")

    @field_validator("container")
    @classmethod
    def _not_an_option(cls, value: str | None) -> str | None:
        if value is not None and value.startswith("-"):
            raise ValueError(
                f"container {value!r} starts with '-': apptainer would read it as an option; use ./{value}"
            )
        return value

    @field_validator("env_vars")
    @classmethod
    def _names_are_identifiers(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [name for name in value if not _ENV_NAME.match(name)]
        if bad:
            shown = ", ".join(repr(name) for name in bad)
            raise ValueError(f"environment variable names must be shell identifiers: {shown}")
        for name, item in value.items():
            _without_nul(item, f"the value of environment variable {name}")
        return value


class JobDefinition(BaseModel):
    """One job to render into a batch script: either a ``command`` or a complete user ``script``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="job", min_length=1, max_length=JOB_NAME_MAX)
    command: str | list[str] | None = Field(default=None)
    script: str | None = Field(default=None, max_length=MAX_SCRIPT_CHARS)
    resources: Resources = Field(default_factory=Resources)
    environment: Environment = Field(default_factory=Environment)
    work_dir: str | None = None
    log_dir: str = "logs"
    dependency: str | None = Field(
        default=None,
        pattern=_DEPENDENCY,
    )
    """A Slurm ``--dependency`` value such as ``afterok:12:13``; set by the workflow engine."""
    renderer: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    """The renderer that writes this job's script (``svc plugins`` lists them); none means the configuration's
    ``rendering.renderer``."""

    @field_validator("name")
    @classmethod
    def _printable_name(cls, value: str) -> str:
        if not re.match(NO_CONTROL, value):
            raise ValueError("job name must be one line without control characters (newline, tab, NUL...)")
        return value

    @field_validator("script")
    @classmethod
    def _script_text(cls, value: str | None) -> str | None:
        return _without_nul(value, "the script")

    @field_validator("command")
    @classmethod
    def _command_text(cls, value: str | list[str] | None) -> str | list[str] | None:
        words = [value] if isinstance(value, str) else list(value or [])
        if sum(len(word) for word in words) > MAX_SCRIPT_CHARS:
            raise ValueError(f"the command is longer than {MAX_SCRIPT_CHARS} characters")
        for word in words:
            _without_nul(word, "the command")
        return value

    @field_validator("log_dir", "work_dir")
    @classmethod
    def _clean_path(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or "\0" in value or "\n" in value):
            raise ValueError("path must be non-empty and may not contain newlines or NUL")
        return value

    @model_validator(mode="after")
    def _command_or_script(self) -> JobDefinition:
        if (self.command is None) == (self.script is None):
            raise ValueError("give exactly one of 'command' or 'script'")
        if isinstance(self.command, list) and not self.command:
            raise ValueError("'command' may not be an empty list")
        return self

    @property
    def file_stem(self) -> str:
        """The job name made safe for a file name (log files are ``<stem>-<jobid>.out``)."""
        return re.sub(r"[^A-Za-z0-9._-]", "_", self.name)[:64] or "job"


class RenderedScript(BaseModel):
    """A rendered batch script plus where Slurm will write its logs (``%j`` stands for the job id)."""

    model_config = ConfigDict(frozen=True)

    text: str
    log_dir: str
    stdout_path: str
    stderr_path: str

    def log_paths_for(self, job_id: str) -> tuple[str, str]:
        """The stdout and stderr paths once the job id is known."""
        return self.stdout_path.replace("%j", job_id), self.stderr_path.replace("%j", job_id)


def join_remote(base: str | None, path: str) -> str:
    """Join a cluster-side path onto a base directory, leaving absolute paths alone."""
    if base is None or PurePosixPath(path).is_absolute():
        return path
    return str(PurePosixPath(base) / path)
