"""The workflow engine end to end on the dev cluster through the ``local`` transport.

Every job writes into the test's own working directory; whatever a test leaves live is cancelled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import make_url
from sqlmodel import SQLModel, select

from svc_host import hookimpl
from svc_host.domain.jobs import JobState
from svc_host.errors import InvalidStateError, TransportError
from svc_host.host import Host
from svc_host.plugin_core.records import Event
from svc_host.settings.paths import SvcPaths
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.store.tables import JobRecord
from svc_host.testing.waiting import eventually, wait_for_state
from svc_host.workflows.engine import WorkflowEngine
from svc_host.workflows.prepare import RunRequest
from svc_host.workflows.store import RunSnapshot

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture
def svc_database_url(database_url: str) -> str:
    """This module runs on SQLite and on PostgreSQL."""
    return database_url


@pytest.fixture
async def engine(make_host: Callable[[], Host]) -> AsyncIterator[WorkflowEngine]:
    host = make_host()
    made = WorkflowEngine(host, adopt_orphans=False)
    await made.start()
    yield made
    await made.close()
    await host.monitor.stop()
    await host.transports.close()


def workflow(tmp: Path, text: str, name: str = "wf.yaml") -> Path:
    path = tmp / name
    path.write_text(text)
    return path


async def finish(engine: WorkflowEngine, snap: RunSnapshot, timeout: float = 120) -> RunSnapshot:
    done = await engine.wait(snap.run.id, timeout)
    assert done.terminal, {job.name: done.job_status(job) for job in done.jobs}
    return done


def statuses(snap: RunSnapshot) -> dict[str, str]:
    return {job.name: snap.job_status(job) for job in snap.jobs}


DIAMOND = """\
name: diamond
jobs:
  - {name: a, command: "echo a > a.done"}
  - {name: b, command: "test -f a.done && sleep 1 && touch b.done", depends_on: [a]}
  - {name: c, command: "test -f a.done && touch c.done", depends_on: ["afterok:a"]}
  - {name: d, command: "test -f b.done && test -f c.done && echo joined", depends_on: [b, c]}
"""


class Events:
    """An ``svc_event`` observer."""

    def __init__(self) -> None:
        self.seen: list[Event] = []

    @hookimpl
    def svc_event(self, event: Event) -> None:
        if event.name == "workflow_run.status_changed":
            self.seen.append(event)


async def test_a_diamond_completes_in_dependency_order(engine: WorkflowEngine, work: Path) -> None:
    events = Events()
    engine.host.plugins.register(events, "events")
    snap = await engine.run(RunRequest(yaml_path=workflow(work, DIAMOND)), triggered_by="cli")
    assert snap.run.status == "running"
    assert all(job.job_id for job in snap.jobs)  # no retries: everything goes to Slurm at once
    done = await finish(engine, snap)
    assert done.run.status == "completed"
    assert done.run.completed_at is not None
    assert statuses(done) == dict.fromkeys("abcd", "COMPLETED")
    assert (work / "logs" / f"d-{done.jobs[3].job_id}.out").read_text() == "joined\n"
    records = engine.host.store.call(job_repo.history)
    assert {record.source for record in records} == {"workflow"}
    assert sorted(record.name for record in records) == ["a", "b", "c", "d"]
    steps = [(e.payload["from"], e.payload["to"]) for e in events.seen if e.payload["id"] == snap.run.id]
    assert steps == [("syncing", "submitting"), ("submitting", "running"), ("running", "completed")]
    assert events.seen[-1].payload["workflow_name"] == "diamond"


AFTERNOTOK = """\
name: handlers
jobs:
  - {name: bad, command: "exit 3"}
  - {name: on_bad, command: "touch handled-bad", depends_on: ["afternotok:bad"]}
  - {name: good, command: "true"}
  - {name: on_good, command: "touch handled-good", depends_on: ["afternotok:good"]}
  - {name: after_bad, command: "true", depends_on: [bad]}
"""


async def test_afternotok_runs_only_after_a_failure(engine: WorkflowEngine, work: Path) -> None:
    snap = await engine.run(RunRequest(yaml_path=workflow(work, AFTERNOTOK)), triggered_by="cli")
    done = await finish(engine, snap)
    assert statuses(done) == {
        "bad": "FAILED",
        "on_bad": "COMPLETED",
        "good": "COMPLETED",
        "on_good": "SKIPPED",
        "after_bad": "SKIPPED",
    }
    assert (work / "handled-bad").exists()
    assert not (work / "handled-good").exists()
    assert done.run.status == "failed"
    assert done.run.error == "job 'bad' ended FAILED (exit code 3); skipped: on_good, after_bad"
    skipped = [job.job_id for job in done.jobs if job.status == "SKIPPED" and job.job_id]
    # after_bad was submitted to Slurm, then cancelled there rather than left pending forever; on_good waited in
    # svc (good might have been interrupted and retried) and was never submitted
    assert len(skipped) == 1
    assert done.jobs[3].job_id is None
    for job_id in skipped:  # scancel is asynchronous in slurmctld: wait until squeue shows it
        await wait_for_state(engine.host.transport("local"), job_id, {JobState.CANCELLED}, timeout=30)


RETRY = """\
name: flaky
jobs:
  - name: flaky
    command: "test -f marker || { touch marker; exit 1; }"
    retry: 2
    retry_delay: 1
  - {name: after, command: "true", depends_on: [flaky]}
"""


async def test_a_failing_job_recovers_on_its_second_attempt(engine: WorkflowEngine, work: Path) -> None:
    snap = await engine.run(RunRequest(yaml_path=workflow(work, RETRY)), triggered_by="cli")
    assert [job.job_id is not None for job in snap.jobs] == [True, False]  # 'after' waits for the retries
    done = await finish(engine, snap)
    assert done.run.status == "completed"
    flaky = done.jobs[0]
    assert (flaky.attempt, flaky.retries_left, len(json.loads(flaky.job_ids))) == (2, 1, 2)
    assert statuses(done) == {"flaky": "COMPLETED", "after": "COMPLETED"}
    first = engine.host.store.call(job_repo.find_job, "local", json.loads(flaky.job_ids)[0])
    assert first is not None
    assert first.state == "FAILED"


async def test_retries_run_out(engine: WorkflowEngine, work: Path) -> None:
    text = "name: hopeless\njobs:\n  - {name: j, command: 'exit 1', retry: 1, retry_delay: 0}\n"
    done = await finish(engine, await engine.run(RunRequest(yaml_path=workflow(work, text)), triggered_by="cli"))
    assert done.run.status == "failed"
    assert done.run.error == "job 'j' ended FAILED (exit code 1) after 2 attempts"


SLOW = """\
name: slow
jobs:
  - {name: first, command: "sleep 60"}
  - {name: second, command: "sleep 60", depends_on: [first]}
  - {name: later, command: "sleep 60", depends_on: [second], retry: 1}
  - {name: last, command: "true", depends_on: [later]}
"""


async def test_cancel_mid_run(engine: WorkflowEngine, work: Path) -> None:
    snap = await engine.run(RunRequest(yaml_path=workflow(work, SLOW)), triggered_by="cli")
    assert statuses(snap)["last"] == "WAITING"
    await engine.wait(snap.run.id, 30, _until(lambda s: statuses(s)["first"] == "RUNNING"))
    assert await engine.cancel(snap.run.id) == []
    cancelled = await engine.get(snap.run.id)
    assert cancelled.run.status == "cancelled"
    assert cancelled.run.completed_at is not None
    assert statuses(cancelled)["last"] == "CANCELLED"
    await eventually(
        lambda: engine.get(snap.run.id, refresh=True),
        until=lambda shown: set(statuses(shown).values()) == {"CANCELLED"},
        interval=0.5,
        what="every job of the run cancelled",
    )
    with pytest.raises(InvalidStateError, match="is already cancelled"):
        await engine.cancel(snap.run.id)


def _until(condition: Callable[[RunSnapshot], bool]) -> Callable[[RunSnapshot], Awaitable[None]]:
    async def check(snap: RunSnapshot) -> None:
        if condition(snap):
            raise _Reached

    return check


def stored_bytes(store_url: str) -> bytes:
    """What the store holds: the SQLite files byte for byte (free pages and the WAL included), or on PostgreSQL
    every value of every table."""
    if store_url.startswith("sqlite"):
        database = Path(str(make_url(store_url).database))
        return b"".join(path.read_bytes() for path in database.parent.glob(f"{database.name}*"))
    store = Store(store_url)
    try:
        return store.call(
            lambda session: repr(
                [list(session.execute(table.select())) for table in SQLModel.metadata.sorted_tables]
            ).encode()
        )
    finally:
        store.close()


class _Reached(Exception):
    pass


@pytest.fixture(autouse=True)
def _reached_ends_a_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    original = WorkflowEngine.wait

    async def wait(self: WorkflowEngine, run_id: str, timeout: float, on_update: Any = None) -> RunSnapshot:
        try:
            return await original(self, run_id, timeout, on_update)
        except _Reached:
            return await self.get(run_id)

    monkeypatch.setattr(WorkflowEngine, "wait", wait)


CHAIN = """\
name: chain
jobs:
  - {name: a, command: "touch a.ran"}
  - {name: b, command: "touch b.ran", depends_on: [a]}
  - {name: c, command: "touch c.ran", depends_on: [b]}
"""


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # job selection, not the store: once is enough
@pytest.mark.parametrize(
    ("selection", "ran"),
    [
        ({"from_job": "b"}, ["b", "c"]),
        ({"to_job": "b"}, ["a", "b"]),
        ({"single_job": "b"}, ["b"]),
        ({"from_job": "b", "to_job": "b"}, ["b"]),
    ],
)
async def test_from_to_single(engine: WorkflowEngine, work: Path, selection: dict[str, str], ran: list[str]) -> None:
    request = RunRequest(yaml_path=workflow(work, CHAIN), **selection)
    done = await finish(engine, await engine.run(request, triggered_by="cli"))
    assert done.run.status == "completed"
    assert [job.name for job in done.jobs] == ran
    assert sorted(path.stem for path in work.glob("*.ran")) == ran


async def test_a_submission_failure_fails_the_run_and_cancels_what_was_submitted(
    engine: WorkflowEngine, work: Path
) -> None:
    text = (
        "name: bad\njobs:\n  - {name: a, command: 'sleep 60'}\n"
        "  - {name: b, command: x, resources: {partition: nope}}\n"
    )
    with pytest.raises(TransportError, match="submission of job 'b' failed: sbatch failed"):
        await engine.run(RunRequest(yaml_path=workflow(work, text)), triggered_by="cli")
    [snap] = await engine.runs()
    assert snap.run.status == "failed"
    assert snap.run.error is not None
    assert snap.run.error.startswith("submission of job 'b' failed")
    shown = await eventually(
        lambda: engine.get(snap.run.id, refresh=True),
        until=lambda shown: statuses(shown)["a"] == "CANCELLED",
        interval=0.5,
        what="job a cancelled",
    )
    assert statuses(shown) == {"a": "CANCELLED", "b": "FAILED"}


# -- restart ------------------------------------------------------------------------------------------------


def crash(engine: WorkflowEngine) -> None:
    """What kill -9 leaves behind: tasks gone, leases and rows as they were."""
    engine._closed = True
    for timer in engine._timers.values():
        timer.cancel()
    for task in [*engine._tasks, *engine._passes.close(), engine._lease_task]:
        if task is not None:
            task.cancel()
    for task in engine.host.monitor._loops.values():
        task.cancel()


RESTART = """\
name: restart
jobs:
  - {name: a, command: "sleep 3; touch a.done", retry: 1}
  - {name: b, command: "test -f a.done && touch b.done", depends_on: [a]}
  - {name: c, command: "test -f b.done && touch c.done", depends_on: [b]}
"""


async def _restart(make_host: Callable[[], Host], hang_on: str | None, accept: bool, work: Path) -> None:
    first = make_host()
    old = WorkflowEngine(first, adopt_orphans=False, lease_seconds=2, renew_seconds=0.5)
    await old.start()
    local = first.transport("local")
    real_submit = local.submit
    hung = asyncio.Event()

    async def submit(script: Any) -> str:
        if hang_on is not None and f"--job-name={hang_on}\n" in script.text:
            if accept:
                await real_submit(script)
            hung.set()
            await asyncio.Event().wait()  # killed here
        return await real_submit(script)

    local.submit = submit  # type: ignore[method-assign]
    text = RESTART if hang_on != "a" else RESTART.replace(", retry: 1", "")
    launching = asyncio.create_task(old.run(RunRequest(yaml_path=workflow(work, text)), triggered_by="cli"))
    if hang_on is None:
        await launching
    else:
        await asyncio.wait_for(hung.wait(), 60)
    [before] = await old.runs()
    crash(old)
    launching.cancel()
    await asyncio.gather(launching, return_exceptions=True)
    await first.transports.close()

    second = make_host()
    new = WorkflowEngine(second, lease_seconds=2, renew_seconds=0.5)
    await new.start()
    try:
        done = await new.wait(before.run.id, 120)
        assert done.run.status == "completed", (done.run.error, statuses(done))
        assert statuses(done) == {"a": "COMPLETED", "b": "COMPLETED", "c": "COMPLETED"}
        assert done.run.owner == new.owner
        records = second.store.call(lambda session: list(session.exec(select(JobRecord))))
        assert sorted(record.name for record in records) == ["a", "b", "c"]  # nothing submitted twice
        assert [job.attempt for job in done.jobs] == [1, 1, 1]
        assert (work / "c.done").exists()
    finally:
        await new.close()
        await second.monitor.stop()
        await second.transports.close()


async def test_restart_mid_run_finishes_the_run(make_host: Callable[[], Host], work: Path) -> None:
    """Crash while 'a' runs and 'b' waits in svc (a may be retried): the new server submits b and c."""
    await _restart(make_host, None, False, work)


async def test_restart_during_an_accepted_sbatch_adopts_the_job(make_host: Callable[[], Host], work: Path) -> None:
    """Killed after sbatch accepted 'b' but before its id was stored: the marker finds it; no second 'b'."""
    await _restart(make_host, "b", True, work)


async def test_restart_during_a_refused_sbatch_submits_again(make_host: Callable[[], Host], work: Path) -> None:
    """Killed before sbatch accepted 'a': nothing carries the marker, so 'a' is submitted once, by the new server."""
    await _restart(make_host, "a", False, work)


ENV = """\
name: env
args: {greeting: hello}
jobs:
  - name: first
    command: 'echo "$FROM_FILE $FROM_CONFIG" > env.out'
    environment: {env_vars: {FROM_FILE: "{{ greeting }}-file-value-7f3a"}}
  - name: second
    command: 'echo "$FROM_FILE $FROM_CONFIG" >> env.out'
    depends_on: [first]
    environment: {env_vars: {FROM_FILE: "{{ greeting }}-file-value-7f3a"}}
"""


async def test_env_var_values_reach_the_jobs_but_never_the_store(
    engine: WorkflowEngine, work: Path, svc_paths: SvcPaths, svc_database_url: str
) -> None:
    """Values come from the workflow file (rendered with the run's args) and the configuration, read again at
    each submission (the second job is submitted later, by a monitor-driven pass); the store keeps names only."""
    svc_paths.user_config.parent.mkdir(parents=True, exist_ok=True)
    svc_paths.user_config.write_text(json.dumps({"environment": {"env_vars": {"FROM_CONFIG": "config-token-9c1e"}}}))
    snap = await engine.run(RunRequest(yaml_path=workflow(work, ENV), args={"greeting": "hi"}), triggered_by="cli")
    done = await finish(engine, snap)
    assert statuses(done) == {"first": "COMPLETED", "second": "COMPLETED"}
    assert (work / "env.out").read_text() == "hi-file-value-7f3a config-token-9c1e\n" * 2
    assert {json.loads(job.definition)["environment"]["env_vars"]["FROM_CONFIG"] for job in done.jobs} == {""}
    records = engine.host.store.call(lambda session: list(session.exec(select(JobRecord))))
    assert {record.env_var_names for record in records} == {'["FROM_CONFIG", "FROM_FILE"]'}
    engine.host.store.close()  # SQLite: checkpoint the WAL, every byte the store holds is in the file now
    stored = stored_bytes(svc_database_url)
    assert b"config-token-9c1e" not in stored
    assert b"hi-file-value-7f3a" not in stored
    assert b"FROM_CONFIG" in stored
