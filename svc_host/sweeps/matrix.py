"""The sweep spec and its expansion into cells (pure).

``matrix`` maps an axis to a non-empty list of scalars; the cells are the cartesian product in axis order,
each cell's args being the sweep's args with the cell's values laid over them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator

from svc_host.domain.validation_words import describe_validation, field_problems
from svc_host.errors import InvalidRequestError
from svc_host.workflows.source import nesting_problem
from svc_host.workflows.templating import python_problems

MAX_CELLS = 1000
MAX_SWEEP_JOBS = 10_000
"""Jobs of a whole sweep (cells x jobs per cell): what one request may put on a shared cluster."""
Scalar = str | int | float | bool


class SweepSpec(BaseModel):
    """``{matrix, fail_fast, max_parallel}`` as in the MCP spec, and ``max_failures``: the failure budget, how
    many cells may fail before the sweep stops launching and cancels the rest (None: never stop; 0: stop at the
    first failure). It replaces ``fail_fast`` (which lets launched cells finish), so the two are not combined."""

    model_config = ConfigDict(extra="forbid")

    matrix: dict[str, list[Scalar]]
    fail_fast: bool = False
    max_parallel: int = Field(default=4, ge=1, le=MAX_CELLS)
    max_failures: StrictInt | None = Field(default=None, ge=0, le=MAX_CELLS)

    @field_validator("matrix", mode="before")
    @classmethod
    def _scalars_only(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        if not value:
            raise ValueError("needs at least one axis")
        for axis, values in value.items():
            if not isinstance(values, list) or not values:
                raise ValueError(f"axis {axis!r} must be a non-empty list of values")
            for index, item in enumerate(values):
                if isinstance(item, dict | list | tuple) or item is None:
                    raise ValueError(f"axis {axis!r} value {index} must be a string, number or boolean, got {item!r}")
        return value

    @model_validator(mode="after")
    def _one_stop_rule(self) -> SweepSpec:
        if self.fail_fast and self.max_failures is not None:
            raise ValueError(
                "give fail_fast or max_failures, not both: fail_fast stops launching at the first failure and lets "
                "launched cells finish; max_failures N cancels the rest once more than N cells have failed"
            )
        return self

    @property
    def cell_count(self) -> int:
        return math.prod(len(values) for values in self.matrix.values())


def parse_sweep(raw: Any) -> SweepSpec:
    """Validate a sweep spec; errors use the spec's messages (``sweep.matrix must be a mapping``,
    ``invalid sweep spec: <detail>``, the ``python:`` message) and a clear one past 1,000 cells."""
    if not isinstance(raw, Mapping):
        raise InvalidRequestError("invalid sweep spec: expected an object with 'matrix'")
    if "matrix" in raw and not isinstance(raw["matrix"], Mapping):
        raise InvalidRequestError("sweep.matrix must be a mapping")
    deep = nesting_problem(dict(raw), "invalid sweep spec")
    if deep is not None:
        raise InvalidRequestError(deep)
    problems = python_problems("sweep.matrix", raw.get("matrix", {}), ())
    if problems:
        raise InvalidRequestError("; ".join(problems))
    try:
        spec = SweepSpec.model_validate(raw)
    except ValidationError as exc:
        fields = [{**p, "field": f"sweep.{p['field']}"} for p in field_problems(exc.errors())]
        raise InvalidRequestError(f"invalid sweep spec: {describe_validation(exc.errors())}", fields=fields) from None
    if spec.cell_count > MAX_CELLS:
        raise InvalidRequestError(
            f"invalid sweep spec: the matrix has {spec.cell_count} cells; at most {MAX_CELLS} are allowed"
        )
    return spec


def check_sweep_jobs(spec: SweepSpec, jobs_per_cell: int) -> None:
    """Refuse a sweep whose cells together would submit more than :data:`MAX_SWEEP_JOBS` jobs."""
    total = spec.cell_count * jobs_per_cell
    if total > MAX_SWEEP_JOBS:
        raise InvalidRequestError(
            f"invalid sweep spec: {spec.cell_count} cells x {jobs_per_cell} jobs = {total} jobs; at most "
            f"{MAX_SWEEP_JOBS} jobs per sweep are allowed (fewer cells, or run fewer jobs with from_job/to_job)"
        )


def expand(spec: SweepSpec, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every cell's arguments, in axis order (the last axis varies fastest)."""
    axes = list(spec.matrix)
    return [{**args, **dict(zip(axes, values, strict=True))} for values in itertools.product(*spec.matrix.values())]
