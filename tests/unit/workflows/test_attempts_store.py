"""Attempts as the store keeps them (SQLite and PostgreSQL): each with its job row, the retry decision made
when it ended, and the escalated resources and excluded nodes the next attempt is submitted with."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.submission import JobDefinition, Resources
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.workflows import job_rows
from svc_host.workflows import store as repo
from svc_host.workflows.plan import RETRYING, WAITING, plan
from svc_host.workflows.retries import Escalate, MemoryRule, OnInterruption

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def store(database_url: str) -> Store:
    return Store(database_url)


def submit(store: Store, run_id: str, job_id: str, expected: str) -> None:
    row = store.call(repo.snapshot, run_id).jobs[0]
    assert store.call(job_rows.begin_submit, row.id, expected) is not None
    definition = JobDefinition.model_validate_json(row.definition)
    store.call(
        job_rows.finish_submit,
        row.id,
        transport="local",
        job_id=job_id,
        definition=definition,
        stdout_path=None,
        stderr_path=None,
    )


def end(store: Store, job_id: str, state: JobState, exit_code: int) -> None:
    raw = f"{state.value} 0:{exit_code}"
    status = JobStatus(job_id=job_id, state=state, raw_state=raw, exit_code=exit_code, node_list="gpu07")
    store.call(job_repo.apply_statuses, "local", {job_id: status})


def advance(store: Store, run_id: str) -> None:
    snap = store.call(repo.snapshot, run_id)
    store.call(job_rows.apply_updates, run_id, plan(snap.views(), NOW).updates, NOW)


def test_attempts_keep_their_ends_reasons_and_the_next_attempts_resources(store: Store) -> None:
    definition = JobDefinition(name="train", command="train", resources=Resources(memory_per_node="1G"))
    job = repo.NewJob(
        "train",
        [],
        definition,
        retry=0,
        retry_delay=5,
        on_interruption=OnInterruption(retries=1, exclude_node=True),
        escalate=Escalate(memory=MemoryRule(factor=2, max="4G")),
    )
    store.call(
        repo.insert_run,
        repo.NewRun("wf", "/x.yaml", {}, {}, "local", None, [], [job]),
        run_id="r",
        status="running",
        triggered_by="cli",
    )
    submit(store, "r", "11", WAITING)
    end(store, "11", JobState.OUT_OF_MEMORY, 125)
    advance(store, "r")
    submit(store, "r", "12", RETRYING)
    end(store, "12", JobState.NODE_FAIL, 0)
    advance(store, "r")
    row = store.call(repo.snapshot, "r").jobs[0]
    assert (row.status, row.interruptions_left, row.exclude_nodes) == (RETRYING, 0, "gpu07")
    assert json.loads(row.definition)["resources"]["memory_per_node"] == "2G"
    submit(store, "r", "13", RETRYING)
    attempts = store.call(repo.attempts, "r")
    assert [(a.attempt, a.record.job_id, a.record.state, a.record.node_list, a.reason) for a in attempts] == [
        (1, "11", "OUT_OF_MEMORY", "gpu07", "OUT_OF_MEMORY: memory 1G -> 2G (x2, cap 4G)"),
        (2, "12", "NODE_FAIL", "gpu07", "NODE_FAIL: retried automatically, 1 of 1, excluding gpu07"),
        (3, "13", "PENDING", None, None),
    ]
    assert [json.loads(a.record.resources)["memory_per_node"] for a in attempts] == ["1G", "2G", "2G"]
