"""What a wait for the next change reports (``svc_host.runtime.changes``), and the pace while someone waits."""

from __future__ import annotations

import asyncio

from svc_host.domain.submission import RenderedScript
from svc_host.plugin_core.manager import PluginManager
from svc_host.runtime.changes import JOB_CHANGED, RUN_CHANGED, SWEEP_CHANGED, Observed, Part, Subject, concerns, diff
from svc_host.runtime.monitor import Monitor
from svc_host.runtime.transport_registry import TransportRegistry
from svc_host.store import jobs as repo
from svc_host.store.database import Store
from svc_host.testing.fake import FakeTransport, transport_plugin
from svc_host.testing.waiting import DEADLINE, eventually


def run_read(status: str, jobs: dict[str, tuple[str | None, str]], transport: str = "local") -> Observed:
    parts = {"run": Part("run", "r1", status)}
    parts.update({f"job:{name}": Part("job", job_id, state, name) for name, (job_id, state) in jobs.items()})
    ids = frozenset(job_id for job_id, _ in jobs.values() if job_id)
    return Observed(status, status in {"completed", "failed", "cancelled"}, transport, parts, {}, ids)


def test_a_run_reports_its_own_move_and_each_job_that_moved_or_was_retried() -> None:
    before = run_read("running", {"prep": ("10", "COMPLETED"), "train": ("11", "RUNNING"), "eval": (None, "PENDING")})
    after = run_read("running", {"prep": ("10", "COMPLETED"), "train": ("12", "PENDING"), "eval": (None, "PENDING")})
    assert diff(before, after) == [{"subject": "job", "id": "12", "name": "train", "from": "RUNNING", "to": "PENDING"}]
    done = run_read("completed", {"prep": ("10", "COMPLETED"), "train": ("12", "COMPLETED"), "eval": ("13", "X")})
    assert [(c["subject"], c["id"], c["from"], c["to"]) for c in diff(after, done)] == [
        ("run", "r1", "running", "completed"),
        ("job", "12", "PENDING", "COMPLETED"),
        ("job", "13", "PENDING", "X"),
    ]
    assert diff(done, done) == []


def test_a_new_cell_counts_as_a_change_from_nothing() -> None:
    empty = Observed("pending", False, "local", {"sweep": Part("sweep", 3, "pending")}, {})
    grown = Observed("pending", False, "local", {**empty.parts, "cell:a": Part("cell", "a", "pending")}, {})
    assert diff(empty, grown) == [{"subject": "cell", "id": "a", "from": None, "to": "pending"}]


def test_only_events_about_the_subject_concern_it() -> None:
    job = Subject("job", "42", "hpc")
    seen = Observed("RUNNING", False, "hpc", {}, {})
    assert concerns(job, JOB_CHANGED, {"transport": "hpc", "job_id": "42"}, seen)
    assert not concerns(job, JOB_CHANGED, {"transport": "local", "job_id": "42"}, seen)  # another cluster's 42
    assert not concerns(job, RUN_CHANGED, {"id": "42"}, seen)

    run = Subject("run", "r1")
    read = run_read("running", {"train": ("11", "RUNNING")}, transport="hpc")
    assert concerns(run, RUN_CHANGED, {"id": "r1"}, read)
    assert concerns(run, JOB_CHANGED, {"transport": "hpc", "job_id": "11"}, read)  # one of its jobs
    assert not concerns(run, JOB_CHANGED, {"transport": "hpc", "job_id": "12"}, read)
    assert not concerns(run, RUN_CHANGED, {"id": "r2"}, read)

    sweep = Subject("sweep", 7)
    assert concerns(sweep, SWEEP_CHANGED, {"id": 7}, seen)
    assert concerns(sweep, RUN_CHANGED, {"id": "cell-run", "sweep_id": 7}, seen)  # one of its cells
    assert not concerns(sweep, RUN_CHANGED, {"id": "other", "sweep_id": None}, seen)
    assert not concerns(sweep, SWEEP_CHANGED, {"id": 8}, seen)


class CountingMonitor(Monitor):
    """A monitor that says when it ticked."""

    ticked: asyncio.Event

    async def tick(self, transport: str) -> list[repo.StateChange]:
        changes = await super().tick(transport)
        self.ticked.set()
        return changes

    async def wait_ticks(self, count: int) -> None:
        for _ in range(count):
            self.ticked.clear()
            await self.ticked.wait()


async def test_a_watched_transport_keeps_the_quick_pace_and_backs_off_after(
    svc_plugin_manager: PluginManager, database_url: str
) -> None:
    fake = FakeTransport("fake")
    svc_plugin_manager.register(transport_plugin(fake), "fake-plugin")
    store = Store(database_url)
    monitor = CountingMonitor(
        store, TransportRegistry(svc_plugin_manager), lambda event: None, min_interval=0.01, max_interval=60.0
    )
    monitor.ticked = asyncio.Event()
    monitor.watched_interval = 0.01
    job_id = await fake.submit(RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e"))
    store.call(repo.add_job, transport="fake", job_id=job_id, name="held", source="cli", resources={}, command=[])
    monitor.poke("fake")
    try:
        await asyncio.wait_for(monitor.wait_ticks(1), DEADLINE)
        with monitor.watch("fake"):
            # nothing changes, yet the loop does not back off: 30 ticks with doubling pauses would take years
            await asyncio.wait_for(monitor.wait_ticks(30), DEADLINE)
        # unwatched, it backs off again: its pauses double past the watched pace
        await eventually(lambda: monitor._sleeping.get("fake", 0.0) > 10 * monitor.watched_interval)
    finally:
        await monitor.stop()
        store.close()
