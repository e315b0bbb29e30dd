"""Why a job is pending, on the dev cluster, by making each reason happen: a hold, a QOS limit and an account limit
set with sacctmgr (on a QOS and an account of the test's own), all GPUs taken, a job wider than the up nodes, one
longer than its partition allows, a dependency on a job that failed; and "would it fit" for jobs not submitted."""

from __future__ import annotations

import getpass
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from svc_host.domain.submission import JobDefinition, Resources
from svc_host.errors import NotFoundError
from svc_host.host import Host
from svc_host.services import jobs, pending
from svc_host.testing.plugin import HOLDS_GPUS
from svc_host.testing.waiting import eventually

pytestmark = pytest.mark.cluster
QOS = "svct_pendq"
ACCOUNT = "svct_penda"


def sacctmgr(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sacctmgr", "-i", *words], capture_output=True, text=True, timeout=60, check=False)


def drop_limits(user: str) -> None:
    """Remove the test's QOS and account (and the jobs still in them): also what a killed run left behind."""
    for flag in (f"--qos={QOS}", f"--account={ACCOUNT}"):
        subprocess.run(["scancel", flag], capture_output=True, timeout=60, check=False)
    for _ in range(120):  # sacctmgr refuses to remove an account or QOS with live jobs
        live = (
            subprocess.run(
                ["squeue", "-h", "-a", f"--qos={QOS}"], capture_output=True, text=True, timeout=60, check=False
            ).stdout
            + subprocess.run(
                ["squeue", "-h", "-a", f"--account={ACCOUNT}"], capture_output=True, text=True, timeout=60, check=False
            ).stdout
        )
        if not live.strip():
            break
        subprocess.run(["sleep", "0.5"], check=False)
    sacctmgr("remove", "user", user, f"account={ACCOUNT}")
    sacctmgr("remove", "account", ACCOUNT)
    sacctmgr("modify", "user", user, "set", f"qos-={QOS}")
    sacctmgr("remove", "qos", QOS)


@pytest.fixture
def limits() -> Iterator[str]:
    """QOS ``svct_pendq`` (MaxTRESPerUser=gres/gpu=1) and account ``svct_penda`` (GrpTRES=gres/gpu=1), granted to
    this user, removed afterwards."""
    user = getpass.getuser()
    drop_limits(user)
    try:
        for words in (
            ("add", "qos", QOS, "MaxTRESPerUser=gres/gpu=1"),
            ("modify", "user", user, "set", f"qos+={QOS}"),
            ("add", "account", ACCOUNT, "GrpTRES=gres/gpu=1"),
            ("add", "user", user, f"account={ACCOUNT}"),
        ):
            done = sacctmgr(*words)
            assert done.returncode == 0, done.stderr
        yield user
    finally:
        drop_limits(user)


async def submit(host: Host, *directives: str, command: str = "sleep 300", transport: str = "local") -> str:
    text = "#!/bin/bash\n" + "".join(f"#SBATCH {line}\n" for line in directives) + f"{command}\n"
    record = await jobs.submit(
        host, JobDefinition(name="pend", script=text, work_dir=".", log_dir="logs"), transport=transport, source="cli"
    )
    return record.job_id


async def reason_of(host: Host, job_id: str, reason: str, *, transport: str = "local") -> dict[str, Any]:
    """The explanation once Slurm gives the job ``reason`` (it evaluates a new job within a few seconds)."""
    return await eventually(
        lambda: explained(host, transport, job_id),
        until=lambda answer: answer["reason"] is not None and answer["reason"].startswith(reason),
        interval=0.5,
        what=f"job {job_id}'s reason {reason}",
    )


async def explained(host: Host, transport: str, job_id: str) -> dict[str, Any]:
    return dict((await pending.explain(host, transport, [job_id]))[0])


async def running(host: Host, transport: str, job_id: str) -> None:
    """Once the job runs (a filler holds every GPU once it runs)."""
    await eventually(
        lambda: explained(host, transport, job_id),
        until=lambda answer: answer["status"] == "RUNNING",
        interval=0.5,
        what=f"job {job_id} running",
    )


async def test_hold_failed_dependency_and_not_pending(make_host: Callable[[], Host]) -> None:
    host = make_host()
    held = await submit(host, "--hold", "-p debug")
    fails = await submit(host, "-p debug", command="exit 1")
    after = await submit(host, "-p debug", f"--dependency=afterok:{fails}", command="true")
    later = await submit(host, "-p debug", "--begin=now+1hour", command="true")
    answer = await reason_of(host, held, "JobHeldUser")
    assert answer["explanation"] == (
        f"Job {held} is held (JobHeldUser): it will not start until it is released (scontrol release {held})."
    )
    assert answer["needs_action"]
    never = await reason_of(host, after, "DependencyNeverSatisfied")
    assert never["explanation"].startswith(
        f"Job {after} will never start: its dependency (afterok on job {fails}) can no longer be met"
    )
    begins = await reason_of(host, later, "BeginTime")
    start = datetime.fromisoformat(begins["start_estimate"]["at"])
    assert timedelta(minutes=59) < start - datetime.now(UTC) <= timedelta(hours=1)
    assert begins["explanation"] == f"Job {later} may not start before {start:%Y-%m-%dT%H:%M:%S} (--begin)."
    both = await pending.explain(host, "local", [held, fails])  # one scontrol for several jobs
    assert [answer["pending"] for answer in both] == [True, False]
    assert both[1]["explanation"] == f"Job {fails} is FAILED, not pending."
    with pytest.raises(NotFoundError):
        await pending.explain(host, "local", ["999999999"])


async def test_a_pending_array_task_by_its_own_id(make_host: Callable[[], Host]) -> None:
    host = make_host()
    array = await submit(host, "--hold", "-p debug", "--array=0-2%1", command="true")
    answer = await reason_of(host, f"{array}_2", "JobHeldUser")  # one scontrol record, ArrayTaskId=0-2%1
    assert answer["job_id"] == f"{array}_2"
    assert answer["explanation"].startswith(f"Job {array}_2 is held (JobHeldUser)")
    several = await pending.explain(host, "local", [f"{array}_1", f"{array}_2"])  # all jobs in one scontrol
    assert [(one["job_id"], one["reason"]) for one in several] == [
        (f"{array}_1", "JobHeldUser"),
        (f"{array}_2", "JobHeldUser"),
    ]


async def test_too_wide_and_too_long(make_host: Callable[[], Host]) -> None:
    host = make_host()
    wide = await submit(host, "-N2", "-p multi")
    long = await submit(host, "-p short", "-t 10")
    answer = await reason_of(host, wide, "Nodes required")  # ReqNodeNotAvail on newer Slurm
    assert "phantom (down*)" in answer["explanation"]
    assert "It asks for 2 nodes and partition 'multi' has 1 up" in answer["explanation"]
    assert answer["limit"] == {"scope": "nodes", "name": "multi", "field": "NumNodes", "value": "2", "used": "1"}
    too_long = await reason_of(host, long, "PartitionTimeLimit")
    assert too_long["explanation"].startswith(
        f"Job {long} asks for 00:10:00, more than partition 'short' allows (MaxTime 00:05:00)"
    )


@HOLDS_GPUS
async def test_qos_and_account_gpu_limits(make_host: Callable[[], Host], limits: str) -> None:
    host = make_host()
    first = await submit(host, "-p gpu", f"--qos={QOS}", "--gres=gpu:1")
    second = await submit(host, "-p gpu", f"--qos={QOS}", "--gres=gpu:1")
    in_account = [await submit(host, "-p gpu", f"--account={ACCOUNT}", "--gres=gpu:1") for _ in range(2)]
    qos = await reason_of(host, second, "QOSMaxGRESPerUser")
    assert qos["explanation"] == (
        f"Waiting for GPUs: QOS '{QOS}' allows 1 GPU per user (MaxTRESPerUser gres/gpu=1) and your running jobs "
        "already use 1; this job asks for 1 GPU."
    )
    assert (await pending.explain(host, "local", [first]))[0]["pending"] is False
    account = await reason_of(host, in_account[1], "AssocGrpGRES")
    assert account["explanation"].startswith(
        f"Waiting for GPUs: account '{ACCOUNT}' allows 1 GPU for all its jobs together (GrpTRES gres/gpu=1) and its "
        "running jobs already use 1"
    )
    assert account["limit"]["scope"] == "association"


@HOLDS_GPUS
async def test_resources_when_every_gpu_is_taken(make_host: Callable[[], Host]) -> None:
    host = make_host()
    filler = await submit(host, "-p gpu", "--gres=gpu:4")
    await running(host, "local", filler)
    waiting = await submit(host, "-p gpu", "--gres=gpu:1")
    answer = await reason_of(host, waiting, "Resources")
    assert "partition 'gpu' has 0 of 4 GPUs free now" in answer["explanation"]


async def test_would_it_fit(make_host: Callable[[], Host]) -> None:
    host = make_host()

    def fit(**resources: Any) -> Any:
        definition = JobDefinition(name="fit", command="true", resources=Resources(**resources), work_dir=".")
        return pending.fit_answer(host, definition, transport="local")

    fits = await fit(partition="debug", time_limit="5:00")
    assert fits["fits"] is True
    assert fits["start_estimate"]["nodes"] == "localhost"
    assert "in partition 'debug' (1 processor)" in fits["explanation"]
    too_big = await fit(partition="gpu", gpus_per_node=9)
    assert too_big == {
        "fits": False,
        "start_estimate": None,
        "refusal": "Requested node configuration is not available",
        "explanation": "Slurm would not accept this job: Requested node configuration is not available.",
    }
    too_long = await fit(partition="short", time_limit="10:00")
    assert too_long["fits"] is False
    assert "more than partition 'short' allows (MaxTime 00:05:00)" in too_long["explanation"]
    assert not [job for job in await host.transport("local").queue() if job.name == "fit"]  # nothing submitted


async def test_over_ssh(dev_host: Host) -> None:
    record = await jobs.submit(
        dev_host,
        JobDefinition(name="pend-ssh", script="#!/bin/bash\n#SBATCH --hold\nsleep 60\n", work_dir="."),
        transport="dev",
        source="cli",
    )
    try:
        answer = await reason_of(dev_host, record.job_id, "JobHeldUser", transport="dev")
        assert answer["explanation"].startswith(f"Job {record.job_id} is held (JobHeldUser)")
        fit = await pending.fit_answer(
            dev_host, JobDefinition(name="fit", command="true", work_dir="."), transport="dev"
        )
        assert fit["fits"] is True
    finally:
        await dev_host.transport("dev").cancel([record.job_id])


@HOLDS_GPUS
async def test_over_ssh_resources_when_every_gpu_is_taken(dev_host: Host, dev_env: dict[str, str]) -> None:
    """The count is the cluster's own (``scripts/devcluster env``): 4 untyped GPUs on 22.05, a100:2 and v100:2 on
    24.11's node; a job asking for every GPU, whatever their types, leaves none for the next."""
    gpus = int(dev_env["SVC_DEV_GPUS"])
    filler = await submit(dev_host, "-p gpu", f"--gres=gpu:{gpus}", transport="dev")
    waiting = None
    try:
        await running(dev_host, "dev", filler)
        waiting = await submit(dev_host, "-p gpu", "--gres=gpu:1", transport="dev")
        answer = await reason_of(dev_host, waiting, "Resources", transport="dev")
        assert f"partition 'gpu' has 0 of {gpus} GPUs free now" in answer["explanation"]
    finally:
        await dev_host.transport("dev").cancel([job for job in (filler, waiting) if job is not None])
