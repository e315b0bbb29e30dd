"""The job graph: duplicate names, unknown dependencies, cycles (named), topological order and selection.

Pure functions on the validated model. The topological order is stable: among jobs that are ready at the
same time, the one written first in the file comes first, so the order is predictable from the file.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from svc_host.errors import WorkflowError
from svc_host.workflows.model import Dependency, Workflow, WorkflowJob
from svc_host.workflows.source import dotted

if TYPE_CHECKING:
    from svc_host.workflows.source import Parsed


class JobLike(Protocol):
    """What the graph functions need of a job."""

    @property
    def name(self) -> str: ...

    @property
    def dependencies(self) -> list[Dependency]: ...


@dataclass(frozen=True)
class RawJob:
    """A job as far as it could be read from a document that may not pass the schema."""

    name: str
    dependencies: list[Dependency]
    index: int
    positions: list[int]
    """Where each dependency is in ``depends_on`` (unreadable entries are skipped)."""


def raw_jobs(jobs: Any) -> list[RawJob]:
    """The named jobs of a ``jobs`` value and their readable dependencies (what is unreadable is skipped:
    the schema reports it)."""
    found: list[RawJob] = []
    for index, job in enumerate(jobs if isinstance(jobs, list) else []):
        if not isinstance(job, dict) or not isinstance(job.get("name"), str):
            continue
        dependencies, positions = [], []
        entries = job.get("depends_on")
        for position, entry in enumerate(entries if isinstance(entries, list) else []):
            try:
                dependencies.append(Dependency.parse(entry))
            except (ValueError, AttributeError, TypeError):
                continue
            positions.append(position)
        found.append(RawJob(job["name"], dependencies, index, positions))
    return found


def graph_problems(jobs: Sequence[RawJob], parsed: Parsed | None = None) -> list[str]:
    """Duplicate job names, dependencies on jobs that do not exist, and every dependency cycle."""

    def where(path: tuple[str | int, ...]) -> str:
        return parsed.where(path) if parsed is not None else dotted(path)

    problems: list[str] = []
    first: dict[str, int] = {}
    unique: list[RawJob] = []
    for job in jobs:
        if job.name in first:
            problems.append(
                f"{where(('jobs', job.index, 'name'))}: duplicate job name {job.name!r} "
                f"(first defined at jobs[{first[job.name]}])"
            )
        else:
            first[job.name] = job.index
            unique.append(job)
    for job in unique:
        for position, dependency in zip(job.positions, job.dependencies, strict=True):
            if dependency.job not in first:
                problems.append(
                    f"{where(('jobs', job.index, 'depends_on', position))}: job {job.name!r} depends on "
                    f"unknown job {dependency.job!r}"
                )
    problems += [f"jobs: dependency cycle: {' -> '.join(cycle)}" for cycle in find_cycles(unique)]
    return problems


def _edges(jobs: Sequence[JobLike]) -> dict[str, list[str]]:
    """Parent -> children, in file order."""
    children: dict[str, list[str]] = {job.name: [] for job in jobs}
    for job in jobs:
        for dependency in job.dependencies:
            if dependency.job in children:
                children[dependency.job].append(job.name)
    return children


def find_cycles(jobs: Sequence[JobLike]) -> list[list[str]]:
    """One cycle per strongly connected group of jobs, written ``[a, b, c, a]`` (``a`` runs after ``c``)."""
    children = _edges(jobs)
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(root: str) -> None:
        """Tarjan's algorithm with an explicit stack: a 1,000-job chain must not hit the recursion limit."""
        index_of[root] = low[root] = len(index_of)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(children[root]))]
        while work:
            name, pending = work[-1]
            child = next(pending, None)
            if child is not None:
                if child not in index_of:
                    index_of[child] = low[child] = len(index_of)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(children[child])))
                elif child in on_stack:
                    low[name] = min(low[name], index_of[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[name])
            if low[name] == index_of[name]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == name:
                        break
                if len(group) > 1 or name in children[name]:
                    groups.append(group)

    for job in jobs:
        if job.name not in index_of:
            connect(job.name)
    order = {job.name: position for position, job in enumerate(jobs)}
    return sorted((_cycle_in(set(group), children, order) for group in groups), key=lambda c: order[c[0]])


def _cycle_in(group: set[str], children: dict[str, list[str]], order: dict[str, int]) -> list[str]:
    """A simple cycle through the group's first job, following dependency direction parent -> child."""
    start = min(group, key=order.__getitem__)
    path = [start]
    seen = {start}
    while True:
        nxt = [child for child in children[path[-1]] if child in group]
        if start in nxt:
            return [*path, start]
        fresh = [child for child in nxt if child not in seen] or nxt
        step = min(fresh, key=order.__getitem__)
        if step in seen:  # entered an inner loop: report that loop
            return [*path[path.index(step) :], step]
        path.append(step)
        seen.add(step)


def topological_order(jobs: Sequence[JobLike]) -> list[str]:
    """Job names parents-first; ties broken by file order. ``WorkflowError`` naming a cycle if there is one."""
    order = {job.name: position for position, job in enumerate(jobs)}
    waiting = {job.name: len({d.job for d in job.dependencies if d.job in order}) for job in jobs}
    children = _edges(jobs)
    ready = [(order[name], name) for name, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    result: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        result.append(name)
        for child in dict.fromkeys(children[name]):
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, (order[child], child))
    if len(result) != len(jobs):
        cycles = find_cycles(jobs)
        raise WorkflowError([f"jobs: dependency cycle: {' -> '.join(cycle)}" for cycle in cycles])
    return result


@dataclass(frozen=True)
class SelectedJob:
    """A job chosen to run, with its dependencies on other chosen jobs (edges to skipped jobs are dropped)."""

    job: WorkflowJob
    dependencies: tuple[Dependency, ...]

    @property
    def depends_on(self) -> list[str]:
        """The kept ``depends_on`` entries as written in the file."""
        kept = {dependency.job for dependency in self.dependencies}
        return [entry for entry in self.job.depends_on if Dependency.parse(entry).job in kept]


def select(
    workflow: Workflow,
    *,
    from_job: str | None = None,
    to_job: str | None = None,
    single_job: str | None = None,
) -> list[SelectedJob]:
    """The jobs to run, in topological order.

    ``from_job``/``to_job`` cut the topological order (both ends included); ``single_job`` runs one job
    alone. Dependencies on jobs left out are dropped: those jobs are taken to have run already.
    """
    order = topological_order(workflow.jobs)
    names = set(order)
    for option, value in (("from_job", from_job), ("to_job", to_job), ("single_job", single_job)):
        if value is not None and value not in names:
            raise WorkflowError(
                [f"{option}: job {value!r} is not in workflow {workflow.name!r}; jobs: {', '.join(order)}"]
            )
    if single_job is not None:
        if from_job is not None or to_job is not None:
            raise WorkflowError(["single_job cannot be combined with from_job or to_job"])
        chosen = [single_job]
    else:
        start = order.index(from_job) if from_job is not None else 0
        end = order.index(to_job) if to_job is not None else len(order) - 1
        if start > end:
            raise WorkflowError(
                [f"from_job {from_job!r} comes after to_job {to_job!r} in the run order: {', '.join(order)}"]
            )
        chosen = order[start : end + 1]
    kept = set(chosen)
    return [
        SelectedJob(
            job=workflow.job(name),
            dependencies=tuple(d for d in workflow.job(name).dependencies if d.job in kept),
        )
        for name in chosen
    ]
