"""Crash-safe submission helpers and the run repository's compare-and-set steps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from svc_host.domain.submission import JobDefinition, RenderedScript
from svc_host.runtime import leases
from svc_host.store.database import Store
from svc_host.workflows import job_rows, run_status
from svc_host.workflows import store as repo
from svc_host.workflows.model import Dependency
from svc_host.workflows.store import RUN_LEASES
from svc_host.workflows.submission import dependency_flag, lookup_argv, marker, parse_lookup, with_marker

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_marker_goes_right_after_the_shebang() -> None:
    script = RenderedScript(
        text="#!/bin/bash\n#SBATCH --job-name=a\necho\n", log_dir="l", stdout_path="o", stderr_path="e"
    )
    marked = with_marker(script, marker("run-1", "a", 2))
    assert marked.text == "#!/bin/bash\n#SBATCH --comment=svc-wf:run-1:a:2\n#SBATCH --job-name=a\necho\n"
    assert marked.stdout_path == "o"


def test_dependency_flags_group_by_type() -> None:
    assert dependency_flag([]) is None
    flag = dependency_flag([("afterok", "12"), ("afterany", "13"), ("afterok", "14"), ("afterok", "12")])
    assert flag == "afterok:12:14,afterany:13"
    JobDefinition(name="x", command="true", dependency=flag)  # the flag passes the definition's own check


def test_lookup_finds_the_marker() -> None:
    assert lookup_argv("train")[-2:] == ["--name=train", "--Format=JobArrayID:0|,Comment:0"]
    output = "41|svc-wf:r:train:1\n42|svc-wf:r:train:2\n43|(null)\n"
    assert parse_lookup(output) == {"svc-wf:r:train:1": "41", "svc-wf:r:train:2": "42", "(null)": "43"}


@pytest.fixture
def store(database_url: str) -> Store:
    return Store(database_url)


def new_run() -> repo.NewRun:
    definition = JobDefinition(name="a", command="true", work_dir="/w")
    job = repo.NewJob(name="a", dependencies=[], definition=definition, retry=1, retry_delay=5)
    child = repo.NewJob(
        name="b", dependencies=[Dependency("afterany", "a")], definition=definition, retry=0, retry_delay=5
    )
    return repo.NewRun("wf", "/x.yaml", {"n": 1}, {}, "local", None, [], [job, child])


def test_a_run_is_written_with_its_jobs_and_read_back(store: Store) -> None:
    store.call(repo.insert_run, new_run(), run_id="r1", status="syncing", triggered_by="cli", now=NOW)
    snap = store.call(repo.snapshot, "r1")
    assert snap is not None
    assert [(j.name, j.status, j.retries_left, j.depends_on) for j in snap.jobs] == [
        ("a", "WAITING", 1, "[]"),
        ("b", "WAITING", 0, '["afterany:a"]'),
    ]
    assert [view.dependencies for view in snap.views()] == [(), (Dependency("afterany", "a"),)]
    assert store.call(run_status.set_run_status, "r1", "failed", error="x") == "syncing"
    assert store.call(run_status.set_run_status, "r1", "running") is None  # terminal stays terminal
    assert store.call(repo.snapshot, "r1").run.completed_at is not None


def test_a_submission_is_marked_once_and_recorded_with_its_job_row(store: Store) -> None:
    store.call(repo.insert_run, new_run(), run_id="r1", status="running", triggered_by="cli")
    row = store.call(repo.snapshot, "r1").jobs[0]
    assert store.call(job_rows.begin_submit, row.id, "WAITING") == 1
    assert store.call(job_rows.begin_submit, row.id, "WAITING") is None  # a second engine loses
    definition = JobDefinition.model_validate_json(row.definition)
    status = store.call(
        job_rows.finish_submit,
        row.id,
        transport="local",
        job_id="77",
        definition=definition,
        stdout_path="o",
        stderr_path="e",
    )
    assert status == "running"
    snap = store.call(repo.snapshot, "r1")
    job = snap.jobs[0]
    assert (job.status, job.job_id, job.attempt, job.job_ids) == ("PENDING", "77", 1, '["77"]')
    record = snap.record_of(job)
    assert record is not None
    assert (record.source, record.job_id, record.state) == ("workflow", "77", "PENDING")
    assert store.call(repo.runs_for_jobs, "local", ["77"]) == {"r1"}


def test_leases(store: Store) -> None:
    store.call(
        repo.insert_run, new_run(), run_id="r1", status="running", triggered_by="cli", owner="me", lease_until=NOW
    )
    assert store.call(RUN_LEASES.orphaned, NOW - timedelta(seconds=1)) == []
    assert store.call(RUN_LEASES.claim, "r1", "you", NOW + timedelta(minutes=1), NOW - timedelta(seconds=1)) is False
    assert store.call(RUN_LEASES.orphaned, NOW + timedelta(seconds=1)) == [("r1", "me")]
    assert store.call(RUN_LEASES.claim, "r1", "you", NOW + timedelta(minutes=1), NOW + timedelta(seconds=1)) is True
    assert store.call(RUN_LEASES.orphaned, NOW, dead_owner=lambda owner: owner == "you") == [("r1", "you")]
    assert store.call(RUN_LEASES.claim, "r1", "me", NOW + timedelta(minutes=2), NOW, steal_from="you") is True
    assert store.call(RUN_LEASES.renew, "me", NOW + timedelta(minutes=3)) == ["r1"]
    store.call(RUN_LEASES.release, "me")
    assert store.call(RUN_LEASES.orphaned, NOW) == [("r1", None)]


def test_an_owner_is_dead_only_when_its_process_on_this_machine_is_gone() -> None:
    mine = leases.new_owner()
    assert leases.owner_is_dead(mine) is False
    host = mine.split(":")[0]
    assert leases.owner_is_dead(f"{host}:999999999:x") is True
    assert leases.owner_is_dead("elsewhere:1:x") is False


def test_status_hooks_run_inside_the_status_change_transaction(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str, str]] = []
    monkeypatch.setattr(run_status, "_status_hooks", [])
    run_status.on_status_change(lambda session, run, before: seen.append((run.id, before, run.status)))
    store.call(repo.insert_run, new_run(), run_id="r1", status="pending", triggered_by="mcp", sweep_id=3)
    store.call(run_status.set_run_status, "r1", "syncing")
    store.call(run_status.set_run_status, "r1", "syncing")  # no change, no call
    assert seen == [("r1", "pending", "syncing")]
