"""A job's start and end are stamped once, from the scheduler when it gives them: the job's ``started_at`` and
the timeline's ``RUNNING`` transition agree, also after accounting corrects a start a tick saw late."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.times import as_utc
from svc_host.store import jobs as repo
from svc_host.store.database import Store

SUBMITTED = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)
STARTED = SUBMITTED + timedelta(seconds=3)
ENDED = STARTED + timedelta(seconds=20)


@pytest.fixture
def store(database_url: str) -> Store:
    store = Store(database_url)
    store.call(
        repo.add_job, transport="lab24", job_id="9", name="j", source="web", resources={}, command=[], now=SUBMITTED
    )
    return store


def times(store: Store) -> tuple[datetime | None, datetime | None, dict[str, datetime]]:
    record = store.call(repo.find_job, "lab24", "9")
    assert record is not None
    assert record.id is not None
    moves = {row.to_state: as_utc(row.at) for row in store.call(repo.transitions, record.id)}
    return as_utc(record.started_at), as_utc(record.ended_at), moves


def test_a_start_seen_late_by_a_tick_takes_the_schedulers_time_once_known(store: Store) -> None:
    seen_late = STARTED + timedelta(seconds=4)
    running = JobStatus(job_id="9", state=JobState.RUNNING, raw_state="RUNNING")
    store.call(repo.apply_statuses, "lab24", {"9": running}, seen_late)
    started, _, moves = times(store)
    assert started == moves["RUNNING"] == seen_late  # squeue gave no start: the tick's, for both

    done = JobStatus(job_id="9", state=JobState.COMPLETED, raw_state="COMPLETED", started_at=STARTED, ended_at=ENDED)
    store.call(repo.apply_statuses, "lab24", {"9": done}, ENDED + timedelta(seconds=5))
    started, ended, moves = times(store)
    assert started == moves["RUNNING"] == STARTED
    assert ended == moves["COMPLETED"] == ENDED


def test_a_job_seen_running_with_its_start_is_stamped_with_it(store: Store) -> None:
    running = JobStatus(job_id="9", state=JobState.RUNNING, raw_state="RUNNING", started_at=STARTED)
    store.call(repo.apply_statuses, "lab24", {"9": running}, STARTED + timedelta(seconds=6))
    started, _, moves = times(store)
    assert started == moves["RUNNING"] == STARTED
