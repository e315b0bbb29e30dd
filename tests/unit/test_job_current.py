"""``jobs.current`` (MCP ``get_job_status``): a tracked job the monitor last saw live is asked about alongside the
store's read of it; a job that ended costs no scheduler command; both answer with the recorded name and paths."""

from __future__ import annotations

from svc_host.domain.jobs import JobState
from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.services import jobs
from svc_host.testing.fake import FakeTransport


async def submitted(svc_test_host: Host) -> str:
    definition = JobDefinition(name="probe", command=["true"])
    return (await jobs.submit(svc_test_host, definition, transport="fake", source="mcp")).job_id


async def test_a_job_seen_live_is_answered_from_its_line_and_its_start_stored_after(
    svc_test_host: Host, fake: FakeTransport
) -> None:
    job_id = await submitted(svc_test_host)
    await svc_test_host.monitor.tick("fake")
    fake.set_state(job_id, JobState.RUNNING)
    svc_test_host.transports.snapshots.changed("fake")  # past the queue's ~1 s snapshot: the job is asked about alone
    fake.calls.clear()
    view = await jobs.current(svc_test_host, "fake", job_id)
    assert view.status.state is JobState.RUNNING
    assert view.status.name == "probe"
    assert view.status.stdout_path is not None
    assert view.status.stdout_path.endswith(f"probe-{job_id}.out")
    assert fake.calls[0] == "statuses"  # asked about alone (the monitor's own loop may tick after it on a busy machine)
    await svc_test_host.monitor.stop()  # waits for what the sighting stores
    stored = await jobs.status(svc_test_host, "fake", job_id)
    assert stored.record is not None
    assert stored.record.state == "RUNNING"


async def test_an_ended_job_costs_no_scheduler_command(svc_test_host: Host, fake: FakeTransport) -> None:
    job_id = await submitted(svc_test_host)
    await svc_test_host.monitor.tick("fake")
    fake.set_state(job_id, JobState.COMPLETED, exit_code=0)
    svc_test_host.transports.snapshots.changed("fake")
    await svc_test_host.monitor.tick("fake")  # stores the end
    await svc_test_host.monitor.tick("fake")  # and forgets the job: not live any more
    svc_test_host.transports.snapshots.changed("fake")  # no queue at hand that would answer without a command
    fake.calls.clear()
    view = await jobs.current(svc_test_host, "fake", job_id)
    assert view.status.state is JobState.COMPLETED
    assert view.status.name == "probe"
    assert fake.calls == []
