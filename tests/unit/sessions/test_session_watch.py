"""The watch moves sessions as a user sees them: queued -> starting when the job runs, ready once the app answers
with the secret, ended with the reason (start timeout, app exited with its stderr tail, stopped, time limit, idle)
and one ``session.status_changed`` per move."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from sqlmodel import Session, select

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.host import Host
from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.records import Event
from svc_host.sessions import cleanup, endpoints, secrets
from svc_host.sessions.watch import SessionWatch
from svc_host.store import jobs as job_repo
from svc_host.store import sessions as repo
from svc_host.store.tables import JobRecord
from svc_host.testing.waiting import eventually

from .conftest import App, FileTransport


@pytest.fixture
def heard(svc_register_plugin: Callable[..., None]) -> list[Event]:
    """Every event the host emits, as a ``svc_event`` observer hears it (the one change path)."""
    found: list[Event] = []
    svc_register_plugin(SimpleNamespace(svc_event=hookimpl(lambda event: found.append(event))), "observer")  # noqa: PLW0108 - pluggy marks the function, and a bound method cannot be marked
    return found


DIR = "/home/u/.svc/sessions/abc"
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


async def session(
    host: Host, fake: FileTransport, *, idle_minutes: int | None = None, job_id: str = "1000", where: str = DIR
) -> str:
    fake.jobs[job_id] = JobStatus(job_id=job_id, state=JobState.PENDING, raw_state="PENDING", name="s")
    await host.store.run(
        job_repo.add_job,
        transport="fake",
        job_id=job_id,
        name="svc-session-web",
        source="web",
        resources={},
        command=[],
        stderr_path=f"{where}/job.err",
        now=T0,
    )
    await host.store.run(
        repo.add_session,
        cluster="fake",
        job_id=job_id,
        kind="web",
        fields="{}",
        source="web",
        session_dir=where,
        start_timeout_seconds=60,
        idle_minutes=idle_minutes,
        now=T0,
    )
    fake.files[f"{where}/secret"] = b"s3cret\n"
    secrets.forget("fake", job_id)
    return job_id


async def job_is(host: Host, job_id: str, state: JobState, raw: str | None = None) -> None:
    """The job's state where the monitor keeps it (and where it reads it: the fake's queue)."""
    fake = host.transport("fake")
    assert isinstance(fake, FileTransport)
    fake.set_state(job_id, state, raw=raw)

    def write(db: Session) -> None:
        job = db.exec(select(JobRecord).where(JobRecord.job_id == job_id)).one()
        job.state, job.raw_state, job.started_at = state.value, raw or state.value, T0
        db.add(job)

    await host.store.run(write)


async def row(host: Host, job_id: str) -> tuple[str, str | None, str | None]:
    found = await host.store.run(repo.find_session, "fake", job_id)
    assert found is not None
    return found.state, found.end_reason, found.end_detail


async def test_a_session_becomes_ready_once_its_app_answers_with_the_secret(
    svc_test_host: Host, fake: FileTransport, web_kind: None, app: App, heard: list[Event]
) -> None:
    job_id = await session(svc_test_host, fake)
    watch = SessionWatch(svc_test_host)
    try:
        await watch.tick(T0 + timedelta(seconds=1))
        assert await row(svc_test_host, job_id) == ("queued", None, None)  # the job is still pending
        await job_is(svc_test_host, job_id, JobState.RUNNING)
        await watch.tick(T0 + timedelta(seconds=2))
        assert await row(svc_test_host, job_id) == ("starting", None, None)  # no endpoint.json yet
        fake.files[f"{DIR}/endpoint.json"] = json.dumps({"host": "node1", "port": app.port, "job_id": job_id}).encode()
        await watch.tick(T0 + timedelta(seconds=3))
        assert await row(svc_test_host, job_id) == ("ready", None, None)
        assert app.seen == [f"GET /s/fake/{job_id}/ready HTTP/1.1"]
        await watch.tick(T0 + timedelta(seconds=4))  # nothing more to say
    finally:
        await watch.close()
    moves = [(e.payload["from"], e.payload["to"]) for e in heard if e.name == "session.status_changed"]
    assert moves == [("queued", "starting"), ("starting", "ready")]


async def test_a_guard_up_makes_its_session_ready_before_the_monitor_sees_the_job_run(
    svc_test_host: Host, fake: FileTransport, web_kind: None, app: App
) -> None:
    """The guard's endpoint.json says the job runs: the session is ready at the next tick, the monitor still at
    PENDING; the waiting sessions' endpoints cost one command per tick, however many wait."""
    job_id = await session(svc_test_host, fake)
    other = await session(svc_test_host, fake, job_id="1001", where=f"{DIR}-2")
    watch = SessionWatch(svc_test_host)
    try:
        await watch.tick(T0)
        reads = [argv for argv in fake.commands if argv[:3] == ["sh", "-c", endpoints.READ_ALL]]
        assert reads == [["sh", "-c", endpoints.READ_ALL, "sh", DIR, f"{DIR}-2"]]
        assert await row(svc_test_host, job_id) == ("queued", None, None)
        fake.files[f"{DIR}/endpoint.json"] = json.dumps({"host": "node1", "port": app.port, "job_id": job_id}).encode()
        await watch.tick(T0 + timedelta(seconds=1))
        assert await row(svc_test_host, job_id) == ("ready", None, None)
        assert (await row(svc_test_host, other))[0] == "queued"
        found = await svc_test_host.store.run(repo.find_session, "fake", job_id)
        assert found is not None
        assert (found.node_host, found.node_port, found.started_at) == ("node1", app.port, T0 + timedelta(seconds=1))
        fake.commands.clear()
        await watch.tick(T0 + timedelta(seconds=2))  # only the other session still waits for its guard
        reads = [argv for argv in fake.commands if argv[:3] == ["sh", "-c", endpoints.READ_ALL]]
        assert reads == [["sh", "-c", endpoints.READ_ALL, "sh", f"{DIR}-2"]]
    finally:
        await watch.close()


async def test_a_new_session_is_seen_between_slow_ticks(
    svc_test_host: Host, fake: FileTransport, web_kind: None, app: App
) -> None:
    """A session started while the watch has nothing to wait for is seen at its next look, not its next full tick
    (a minute away here): it is ready within seconds of its app answering."""
    watch = SessionWatch(svc_test_host, interval=60, starting_interval=0.05, look_interval=0.05)
    await watch.start()
    try:
        await asyncio.sleep(0.2)  # the first full tick has passed: nothing was open
        job_id = await session(svc_test_host, fake)
        fake.files[f"{DIR}/endpoint.json"] = json.dumps({"host": "node1", "port": app.port, "job_id": job_id}).encode()

        async def state() -> str:
            return (await row(svc_test_host, job_id))[0]

        await eventually(state, until=lambda found: found == "ready", what="the new session ready")
    finally:
        await watch.close()


async def test_an_app_that_never_answers_ends_at_its_start_timeout_with_its_stderr(
    svc_test_host: Host, fake: FileTransport, web_kind: None, app: App
) -> None:
    job_id = await session(svc_test_host, fake)
    app.answering = False
    await job_is(svc_test_host, job_id, JobState.RUNNING)
    fake.files[f"{DIR}/endpoint.json"] = json.dumps({"host": "node1", "port": app.port, "job_id": job_id}).encode()
    fake.files[f"{DIR}/job.err"] = b"loading...\nstill loading\n"
    watch = SessionWatch(svc_test_host)
    await watch.tick(T0 + timedelta(seconds=30))
    assert (await row(svc_test_host, job_id))[0] == "starting"
    await watch.tick(T0 + timedelta(seconds=61))
    assert await row(svc_test_host, job_id) == ("ended", "start_timeout", "loading...\nstill loading")
    assert fake.jobs[job_id].state is JobState.CANCELLED
    await watch.close()


async def test_a_job_that_ends_says_why(svc_test_host: Host, fake: FileTransport, web_kind: None) -> None:
    job_id = await session(svc_test_host, fake)
    fake.files[f"{DIR}/exit.json"] = b'{"code": 1}'
    fake.files[f"{DIR}/job.err"] = b"Traceback (most recent call last):\nOSError: [Errno 98] Address in use\n"
    await job_is(svc_test_host, job_id, JobState.FAILED)
    watch = SessionWatch(svc_test_host)
    await watch.tick(T0)
    state, reason, detail = await row(svc_test_host, job_id)
    assert (state, reason) == ("ended", "app_exited")
    assert detail is not None
    assert detail.startswith("exit code 1\n")
    assert detail.endswith("OSError: [Errno 98] Address in use")
    assert cleanup.tidy_argv(DIR) in fake.commands  # the ended session's secret goes at once
    await watch.close()


async def test_a_stop_asked_for_ends_stopped_and_a_timeout_time_limit(
    svc_test_host: Host, fake: FileTransport, web_kind: None
) -> None:
    job_id = await session(svc_test_host, fake)
    await svc_test_host.store.run(repo.request_stop, "fake", job_id, T0)
    await job_is(svc_test_host, job_id, JobState.CANCELLED, "CANCELLED by 1000")
    watch = SessionWatch(svc_test_host)
    await watch.tick(T0)
    assert await row(svc_test_host, job_id) == ("ended", "stopped", None)
    await svc_test_host.store.run(repo.move, "fake", job_id, expected="ended", changes={"state": "ready"}, now=T0)
    await svc_test_host.store.run(
        repo.move, "fake", job_id, expected="ready", changes={"stop_requested_at": None}, now=T0
    )
    await job_is(svc_test_host, job_id, JobState.TIMEOUT)
    await watch.tick(T0)
    assert (await row(svc_test_host, job_id))[:2] == ("ended", "time_limit")
    await watch.close()


async def test_an_idle_session_is_warned_then_ended(
    svc_test_host: Host, fake: FileTransport, web_kind: None, heard: list[Event]
) -> None:
    job_id = await session(svc_test_host, fake, idle_minutes=10)
    await job_is(svc_test_host, job_id, JobState.RUNNING)
    ready = {"state": "ready", "ready_at": T0, "started_at": T0, "node_host": "n", "node_port": 1}
    await svc_test_host.store.run(repo.move, "fake", job_id, expected="queued", changes=ready, now=T0)
    watch = SessionWatch(svc_test_host)
    await watch.tick(T0 + timedelta(minutes=4))
    assert [e for e in heard if e.name == "session.idle_warning"] == []
    await watch.tick(T0 + timedelta(minutes=8))  # 80 % of 10 minutes
    await watch.tick(T0 + timedelta(minutes=9))  # warned once
    warned = [e.payload["ends_in_seconds"] for e in heard if e.name == "session.idle_warning"]
    assert warned == [120]
    assert (await row(svc_test_host, job_id))[0] == "ready"
    await watch.tick(T0 + timedelta(minutes=10))
    assert (await row(svc_test_host, job_id))[:2] == ("ended", "idle_timeout")
    assert fake.jobs[job_id].state is JobState.CANCELLED
    await watch.close()
