"""The submission throttle on a Slurm transport that answers from recorded limits and an in-memory queue."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from svc_host.runtime.snapshots import SchedulerSnapshots
from svc_host.runtime.throttle import SubmitThrottle, script_qos
from svc_host.store.jobs import StateChange
from svc_host.testing.fake import FakeTransport
from svc_host.testing.waiting import DEADLINE, eventually
from svc_host.transports.base import CommandResult, SlurmTransport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"
QOS = "svcrec_qos"
"""MaxSubmitJobsPerUser 3, GrpSubmitJobs 10 in the recorded sacctmgr output."""


class QueueCluster(SlurmTransport):
    """sacctmgr and scontrol answer what the dev cluster printed; squeue lists ``jobs`` (id -> user)."""

    name = "cluster"

    def __init__(self) -> None:
        self.jobs: dict[str, str] = {}
        self.commands: list[str] = []
        self.limits_fail = False
        self.queue_fails = False

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        self.commands.append(argv[0])
        if argv[0] == "id":
            return CommandResult(list(argv), 0, "root\n", "")
        if argv[0] == "squeue" and self.queue_fails:
            return CommandResult(list(argv), 1, "", "squeue: error: Unable to contact slurm controller")
        if argv[0] == "squeue":
            lines = [f"{i}|PENDING|debug|1|0:00|1:00|cpu=1|None|{user}||||job" for i, user in self.jobs.items()]
            return CommandResult(list(argv), 0, "\n".join(lines) + "\n", "")
        if self.limits_fail:
            return CommandResult(list(argv), 1, "", "sacctmgr: error: Problem talking to the database")
        recorded = {"scontrol": "scontrol_show_config.txt"} | {
            "assoc": "sacctmgr_assoc.txt",
            "qos": "sacctmgr_qos.txt",
            "user": "sacctmgr_user.txt",
        }
        key = argv[0] if argv[0] == "scontrol" else argv[5]
        return CommandResult(list(argv), 0, (FIXTURES / recorded[key]).read_text(), "")

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


@pytest.fixture
def cluster() -> QueueCluster:
    return QueueCluster()


def throttle_of(transport: SlurmTransport | FakeTransport) -> SubmitThrottle:
    return SubmitThrottle(SchedulerSnapshots(lambda name: transport, max_age=0), recheck=0.05, max_age=0)


def ended(transport: str) -> list[StateChange]:
    return [StateChange(transport, "1", "job", "RUNNING", "COMPLETED", "COMPLETED", 0)]


async def test_the_fourth_job_in_a_qos_of_three_waits_until_one_ends_and_says_why(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    for number in range(3):
        admission = await throttle.admit("cluster", qos=QOS, wanted=1, waiters=[f"run{number}"])
        assert admission.count == 1
        admission.submitted(str(100 + number))
        cluster.jobs[str(100 + number)] = "root"
    fourth = asyncio.ensure_future(throttle.admit("cluster", qos=QOS, wanted=1, waiters=["run3", "sweep:7"]))
    reason = "queued: MaxSubmitJobsPerUser 3 of QOS svcrec_qos reached (3 in queue)"
    await eventually(lambda: throttle.reason("run3") == reason)
    assert not fourth.done()
    assert (throttle.reason("sweep:7"), throttle.waiting("cluster")) == (reason, 1)
    del cluster.jobs["101"]
    await throttle.on_changes(ended("cluster"))
    assert (await asyncio.wait_for(fourth, DEADLINE)).count == 1
    assert throttle.reason("run3") is None


async def test_an_admitted_job_counts_before_any_squeue_shows_it(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    for number in range(3):
        (await throttle.admit("cluster", qos=QOS, wanted=1, waiters=["r"])).submitted(str(200 + number))
    waiting = asyncio.ensure_future(throttle.admit("cluster", qos=QOS, wanted=1, waiters=["r4"]))
    await eventually(lambda: throttle.reason("r4"), what="the fourth job's reason to wait")
    assert not waiting.done()  # nothing in squeue yet, yet three are on their way
    waiting.cancel()


async def test_an_array_is_cut_to_the_room_left_and_abandoned_room_comes_back(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    (await throttle.admit("cluster", qos=QOS, wanted=1, waiters=["r"])).submitted("300")
    cluster.jobs["300"] = "root"
    admission = await throttle.admit("cluster", qos=QOS, wanted=8, waiters=["sweep:1"], array=True)
    assert admission.count == 2
    admission.abandon()
    assert (await throttle.admit("cluster", qos=QOS, wanted=8, waiters=["sweep:1"], array=True)).count == 2


async def test_only_the_users_jobs_in_that_qos_count_against_its_per_user_limit(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    cluster.jobs.update({"400": "svcdev", "401": "svcdev", "402": "svcdev", "403": "root"})
    admission = await throttle.admit("cluster", qos=None, wanted=1, waiters=["r"])  # default QOS normal: no limit
    admission.submitted("404")
    cluster.jobs["404"] = "root"
    counts = await throttle.usage("cluster", (await throttle.snapshots.limits("cluster")).value, QOS)  # type: ignore[arg-type]
    assert (counts.user, counts.user_in_qos, counts.cluster) == (2, 0, 5)
    assert (await throttle.admit("cluster", qos=QOS, wanted=5, waiters=["r"], array=True)).count == 3


async def test_limits_are_read_once_and_a_transport_without_them_is_not_throttled(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    for _ in range(2):
        await throttle.admit("cluster", qos=None, wanted=1, waiters=["r"])
    assert cluster.commands.count("sacctmgr") == 3
    assert cluster.commands.count("scontrol") == 1
    assert (await throttle_of(FakeTransport("fake")).admit("fake", qos=QOS, wanted=9, waiters=["r"])).count == 9
    broken = QueueCluster()
    broken.limits_fail = True
    assert (await throttle_of(broken).admit("cluster", qos=QOS, wanted=9, waiters=["r"])).count == 9


def test_the_qos_of_a_script_is_its_last_directive_before_the_first_command() -> None:
    assert script_qos("#!/bin/bash\n#SBATCH --job-name=a\n#SBATCH --qos=high\necho hi\n") == "high"
    assert script_qos("#!/bin/bash\n#SBATCH -q low --qos scavenger\n") == "scavenger"
    assert script_qos("#!/bin/bash\n#SBATCH -qhigh\n") == "high"
    assert script_qos("#!/bin/bash\necho hi\n#SBATCH --qos=late\n") is None
    assert script_qos("#!/bin/bash\n#SBATCH --time=5\n") is None


async def test_a_run_step_does_not_wait_it_is_woken_when_a_job_ends(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    throttle.recheck = 30  # only the monitor's news wakes it here
    for number in range(3):
        (await throttle.admit("cluster", qos=QOS, wanted=1, waiters=["r"])).submitted(str(500 + number))
        cluster.jobs[str(500 + number)] = "root"
    woken = asyncio.Event()
    assert await throttle.try_admit("cluster", qos=QOS, waiters=["run9", "sweep:2"], wake=woken.set) is None
    assert throttle.reason("sweep:2") == "queued: MaxSubmitJobsPerUser 3 of QOS svcrec_qos reached (3 in queue)"
    await asyncio.sleep(0.1)
    assert not woken.is_set()
    del cluster.jobs["500"]
    await throttle.on_changes(ended("cluster"))
    await asyncio.wait_for(woken.wait(), DEADLINE)
    assert throttle.reason("run9") is not None  # shown until the run tries again
    assert await throttle.try_admit("cluster", qos=QOS, waiters=["run9", "sweep:2"], wake=woken.set) is not None
    assert throttle.reason("run9") is None


async def test_a_run_step_queues_behind_an_array_that_waits(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    for number in range(3):
        (await throttle.admit("cluster", qos=QOS, wanted=1, waiters=["r"])).submitted(str(600 + number))
        cluster.jobs[str(600 + number)] = "root"
    array = asyncio.ensure_future(throttle.admit("cluster", qos=QOS, wanted=4, waiters=["sweep:3"], array=True))
    limit = "queued: MaxSubmitJobsPerUser 3 of QOS svcrec_qos reached (3 in queue)"
    await eventually(lambda: throttle.reason("sweep:3") == limit)  # the array holds the QOS's turn and waits
    cluster.jobs.pop("600")
    assert await throttle.try_admit("cluster", qos=QOS, waiters=["run1"], wake=lambda: None) is None
    assert throttle.reason("run1") == "queued: waiting for earlier submissions"
    assert (await asyncio.wait_for(array, DEADLINE)).count == 1


async def test_an_unreadable_queue_lets_the_submission_go_ahead(cluster: QueueCluster) -> None:
    throttle = throttle_of(cluster)
    for number in range(3):
        (await throttle.admit("cluster", qos=QOS, wanted=1, waiters=["r"])).submitted(str(700 + number))
        cluster.jobs[str(700 + number)] = "root"
    cluster.queue_fails = True
    admitted = await throttle.try_admit("cluster", qos=QOS, waiters=["run1"], wake=lambda: None)
    assert admitted is not None  # sbatch decides; a refusal for the limit is held back by the submitter
    assert throttle.reason("run1") is None
