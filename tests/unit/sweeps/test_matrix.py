"""Sweep specs: validation with the spec's messages, and the cartesian expansion."""

from __future__ import annotations

from typing import Any

import pytest

from svc_host.errors import InvalidRequestError
from svc_host.sweeps.matrix import expand, parse_sweep


def test_defaults_and_expansion_in_axis_order() -> None:
    spec = parse_sweep({"matrix": {"lr": [0.1, 0.01], "seed": [1, 2, 3]}})
    assert (spec.fail_fast, spec.max_parallel, spec.cell_count) == (False, 4, 6)
    cells = expand(spec, {"lr": 1.0, "epochs": 5})
    assert cells[0] == {"lr": 0.1, "seed": 1, "epochs": 5}
    assert [(c["lr"], c["seed"]) for c in cells] == [(0.1, 1), (0.1, 2), (0.1, 3), (0.01, 1), (0.01, 2), (0.01, 3)]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"matrix": [1, 2]}, "sweep.matrix must be a mapping"),
        ({"matrix": "lr=1"}, "sweep.matrix must be a mapping"),
        ([], "invalid sweep spec: expected an object with 'matrix'"),
        ({}, "invalid sweep spec: matrix: Field required"),
        ({"matrix": {}}, "invalid sweep spec: matrix: needs at least one axis"),
        ({"matrix": {"lr": []}}, "invalid sweep spec: matrix: axis 'lr' must be a non-empty list of values"),
        ({"matrix": {"lr": 0.1}}, "invalid sweep spec: matrix: axis 'lr' must be a non-empty list of values"),
        (
            {"matrix": {"lr": [[0.1]]}},
            "invalid sweep spec: matrix: axis 'lr' value 0 must be a string, number or boolean",
        ),
        ({"matrix": {"lr": [{"a": 1}]}}, "axis 'lr' value 0 must be a string, number or boolean"),
        (
            {"matrix": {"lr": [1]}, "max_parallel": 0},
            "invalid sweep spec: max_parallel: Input should be greater than or equal to 1",
        ),
        ({"matrix": {"lr": [1]}, "retries": 2}, "invalid sweep spec: retries: Extra inputs are not permitted"),
        (
            {"matrix": {"lr": [1, "python:__import__('os')"]}},
            "sweep.matrix at 'lr[1]' contains 'python:' prefix which is not allowed: 'python:__import__('os')'",
        ),
    ],
)
def test_bad_specs_are_refused_with_the_spec_messages(raw: Any, message: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_sweep(raw)
    assert message in str(caught.value)


def test_at_most_a_thousand_cells() -> None:
    assert parse_sweep({"matrix": {"a": list(range(10)), "b": list(range(100))}}).cell_count == 1000
    with pytest.raises(InvalidRequestError, match="the matrix has 1001 cells; at most 1000 are allowed"):
        parse_sweep({"matrix": {"a": list(range(7)), "b": list(range(11)), "c": list(range(13))}})
