"""Topological order (stable by file order), cycles and from/to/single selection."""

from __future__ import annotations

import pytest

from svc_host.errors import WorkflowError
from svc_host.workflows.dag import find_cycles, select, topological_order
from svc_host.workflows.model import Workflow, WorkflowJob


def workflow(*jobs: tuple[str, list[str]]) -> Workflow:
    return Workflow(name="w", jobs=[WorkflowJob(name=name, command="true", depends_on=deps) for name, deps in jobs])


DIAMOND = workflow(("d", ["b", "c"]), ("a", []), ("c", ["a"]), ("b", ["afterany:a"]), ("e", []))


def test_order_is_parents_first_with_ties_in_file_order() -> None:
    assert topological_order(DIAMOND.jobs) == ["a", "c", "b", "d", "e"]


def test_order_of_a_cycle_names_it() -> None:
    looped = workflow(("a", ["b"]), ("b", ["a"]), ("c", []))
    with pytest.raises(WorkflowError, match=r"^jobs: dependency cycle: a -> b -> a$"):
        topological_order(looped.jobs)
    assert find_cycles(looped.jobs) == [["a", "b", "a"]]


def names(selected: list) -> list[tuple[str, list[str]]]:  # type: ignore[type-arg]
    return [(s.job.name, s.depends_on) for s in selected]


def test_whole_workflow() -> None:
    assert names(select(DIAMOND)) == [("a", []), ("c", ["a"]), ("b", ["afterany:a"]), ("d", ["b", "c"]), ("e", [])]


def test_from_job_cuts_the_order_and_drops_edges_to_skipped_jobs() -> None:
    assert names(select(DIAMOND, from_job="c")) == [("c", []), ("b", []), ("d", ["b", "c"]), ("e", [])]


def test_to_job_keeps_the_beginning() -> None:
    assert names(select(DIAMOND, to_job="b")) == [("a", []), ("c", ["a"]), ("b", ["afterany:a"])]


def test_from_and_to_together() -> None:
    assert names(select(DIAMOND, from_job="c", to_job="d")) == [("c", []), ("b", []), ("d", ["b", "c"])]


def test_single_job_ignores_dependencies() -> None:
    assert names(select(DIAMOND, single_job="d")) == [("d", [])]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"from_job": "zz"}, "from_job: job 'zz' is not in workflow 'w'; jobs: a, c, b, d, e"),
        ({"single_job": "a", "to_job": "b"}, "single_job cannot be combined with from_job or to_job"),
        ({"from_job": "d", "to_job": "a"}, "from_job 'd' comes after to_job 'a' in the run order: a, c, b, d, e"),
    ],
)
def test_bad_selections(options: dict[str, str], message: str) -> None:
    with pytest.raises(WorkflowError) as caught:
        select(DIAMOND, **options)
    assert str(caught.value) == message
