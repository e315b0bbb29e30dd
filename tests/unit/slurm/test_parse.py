"""Parsers on output recorded from a real Slurm 22.05 (see tests/fixtures/slurm/README.md).

The recording submitted, among others: job 5 named ``a|b c ünï``, job 6 on ``-p gpu --gres=gpu:2``,
job 7 on ``-p multi -N2 --gres=gpu:2`` (pending forever: its second node never answers), 8 ``true``,
9 ``exit 3``, 10 ``kill -9 $$``, 11 cancelled by root, 12 cancelled by its user svcdev (uid 1001),
13 ``--time=1``, array 14 (``--array=0-2``, running), array 15 (pending), 16 ``--hold``,
17 ``--gpus=3`` (pending), 22 a long name with ``|`` and ``=``, 23 a script on stdin. ``sacct_jobs.txt`` was
recorded again (with Start and End) by submitting the same jobs, which got new ids: :data:`SACCT_IDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.resources import NodeInfo
from svc_host.slurm.parse import (
    parse_sacct,
    parse_sbatch,
    parse_scontrol_jobs,
    parse_scontrol_nodes,
    parse_sinfo,
    parse_squeue,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"
NAME = "a|b c ünï"
LONG_NAME = "long name | with = and ünïcödé characters beyond twenty"
MULTI_REASON = "ReqNodeNotAvail, UnavailableNodes:phantom"


SACCT_IDS = {
    "5": "4485", "6": "4534", "7": "4486", "8": "4487", "9": "4488", "10": "4489", "11": "4490", "12": "4491",
    "13": "4492", "14_0": "4493_0", "14_1": "4493_1", "14_2": "4493_2", "15_[0-2]": "4494_[0-2]", "16": "4495",
    "17": "4535", "22": "4496", "23": "4497",
}  # fmt: skip
"""The id of each job of the other recordings in the sacct recording (the same submissions, made again)."""


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _by_id(jobs: list[JobStatus]) -> dict[str, JobStatus]:
    by_id = {job.job_id: job for job in jobs}
    assert len(by_id) == len(jobs), "one record per job id"
    return by_id


@pytest.fixture(scope="module")
def squeue() -> dict[str, JobStatus]:
    return _by_id(parse_squeue(_read("squeue_jobs.txt")))


@pytest.fixture(scope="module")
def squeue_later() -> dict[str, JobStatus]:
    return _by_id(parse_squeue(_read("squeue_jobs_later.txt")))


@pytest.fixture(scope="module")
def sacct() -> dict[str, JobStatus]:
    """The sacct recording by the ids the other recordings gave the same jobs (one id names one job here)."""
    recorded = _by_id(parse_sacct(_read("sacct_jobs.txt")))
    assert set(recorded) == set(SACCT_IDS.values())
    return {job_id: recorded[sacct_id] for job_id, sacct_id in SACCT_IDS.items()}


@pytest.fixture(scope="module")
def scontrol() -> dict[str, JobStatus]:
    return _by_id(parse_scontrol_jobs(_read("scontrol_show_job.txt")))


def test_sbatch_job_id() -> None:
    assert parse_sbatch(_read("sbatch.txt")) == "23"


def test_squeue_states_of_every_kind_of_job(squeue: dict[str, JobStatus]) -> None:
    states = {job_id: job.state for job_id, job in squeue.items()}
    assert states == {
        "5": JobState.RUNNING,
        "6": JobState.RUNNING,
        "7": JobState.PENDING,
        "8": JobState.COMPLETED,
        "9": JobState.FAILED,
        "10": JobState.FAILED,
        "11": JobState.CANCELLED,
        "12": JobState.CANCELLED,
        "13": JobState.RUNNING,
        "14_0": JobState.RUNNING,
        "14_1": JobState.RUNNING,
        "14_2": JobState.RUNNING,
        "15_0": JobState.PENDING,
        "15_1": JobState.PENDING,
        "15_2": JobState.PENDING,
        "16": JobState.PENDING,
        "17": JobState.PENDING,
        "22": JobState.RUNNING,
    }


def test_squeue_names_with_the_delimiter_spaces_and_non_ascii(squeue: dict[str, JobStatus]) -> None:
    assert squeue["5"].name == NAME
    assert squeue["22"].name == LONG_NAME
    assert squeue["14_1"].name == "arr"


def test_squeue_gpus_are_the_whole_jobs(squeue: dict[str, JobStatus]) -> None:
    assert (squeue["6"].gpus, squeue["6"].nodes, squeue["6"].partition) == (2, 1, "gpu")
    assert (squeue["7"].gpus, squeue["7"].nodes, squeue["7"].partition) == (4, 2, "multi")
    assert squeue["17"].gpus == 3  # --gpus=3 is per job, not per node
    assert squeue["5"].gpus == 0


def test_squeue_pending_jobs_say_why(squeue: dict[str, JobStatus]) -> None:
    assert (squeue["7"].reason, squeue["7"].node_list, squeue["7"].elapsed_seconds) == (MULTI_REASON, None, 0)
    assert squeue["16"].reason == "JobHeldUser"
    assert squeue["9"].reason == "NonZeroExitCode"
    assert squeue["5"].reason is None
    assert squeue["7"].time_limit == "UNLIMITED"


def test_squeue_running_job_details(squeue: dict[str, JobStatus]) -> None:
    job = squeue["13"]
    assert (job.user, job.node_list, job.elapsed_seconds, job.time_limit) == ("root", "localhost", 53, "00:01:00")
    assert job.stdout_path == "/tmp/rec/timeout.out"
    assert squeue["12"].user == "svcdev"
    # squeue prints "-o 'out %j.log'" unexpanded; such a path is left out, scontrol has it.
    assert squeue["5"].stdout_path is None


def test_squeue_keeps_recently_ended_jobs_with_their_final_state(squeue_later: dict[str, JobStatus]) -> None:
    job = squeue_later["13"]
    assert (job.state, job.reason, job.elapsed_seconds) == (JobState.TIMEOUT, "TimeLimit", 77)
    assert squeue_later["23"].state is JobState.COMPLETED


def test_squeue_of_the_whole_queue_includes_other_users(squeue: dict[str, JobStatus]) -> None:
    queue = _by_id(parse_squeue(_read("squeue_queue.txt")))
    assert {job.user for job in queue.values()} == {"root", "svcdev"}
    assert all(not job.state.is_terminal for job in queue.values())
    assert queue["5"] == squeue["5"]


def test_sacct_final_states_exit_codes_and_signals(sacct: dict[str, JobStatus]) -> None:
    summary = {
        job_id: (job.state, job.exit_code, job.signal)
        for job_id, job in sacct.items()
        if job_id in {"8", "9", "10", "11", "12", "13", "23"}
    }
    assert summary == {
        "8": (JobState.COMPLETED, 0, 0),
        "9": (JobState.FAILED, 3, 0),
        "10": (JobState.FAILED, 0, 9),  # kill -9 of the batch shell
        "11": (JobState.CANCELLED, 0, 0),
        "12": (JobState.CANCELLED, 0, 0),
        "13": (JobState.TIMEOUT, 0, 0),
        "23": (JobState.COMPLETED, 0, 0),
    }


def test_sacct_keeps_who_cancelled(sacct: dict[str, JobStatus]) -> None:
    assert sacct["11"].raw_state == "CANCELLED by 0"
    assert (sacct["12"].raw_state, sacct["12"].user) == ("CANCELLED by 1001", "svcdev")


def test_sacct_live_jobs_have_no_exit_code_yet(sacct: dict[str, JobStatus]) -> None:
    assert (sacct["5"].state, sacct["5"].exit_code, sacct["5"].signal) == (JobState.RUNNING, None, None)
    assert sacct["7"].exit_code is None


def test_sacct_skips_steps_and_shows_arrays_and_names(sacct: dict[str, JobStatus]) -> None:
    assert not any("." in job_id for job_id in sacct)
    assert {"14_0", "14_1", "14_2", "15_[0-2]"} <= set(sacct)
    assert (sacct["5"].name, sacct["22"].name) == (NAME, LONG_NAME)


def test_sacct_gpus_of_pending_and_running_jobs(sacct: dict[str, JobStatus]) -> None:
    wide = sacct["7"]
    assert (wide.state, wide.gpus, wide.nodes, wide.node_list, wide.reason) == (
        JobState.PENDING,
        4,
        2,
        None,
        "ReqNodeNotAvail",
    )
    assert (sacct["6"].gpus, sacct["17"].gpus, sacct["8"].gpus) == (2, 3, 0)
    assert sacct["13"].time_limit == "00:01:00"
    assert sacct["7"].time_limit is None  # Partition_Limit
    assert sacct["13"].elapsed_seconds == 87


def test_sacct_start_and_end_are_utc_times_while_known(sacct: dict[str, JobStatus]) -> None:
    def at(epoch: int) -> datetime:
        return datetime.fromtimestamp(epoch, UTC)

    timeout = sacct["13"]
    assert (timeout.started_at, timeout.ended_at) == (at(1795470964), at(1795471051))
    assert (timeout.ended_at - timeout.started_at).total_seconds() == timeout.elapsed_seconds
    assert (sacct["8"].started_at, sacct["8"].ended_at) == (at(1795470964), at(1795470964))  # `true`: under 1 s
    assert (sacct["5"].started_at, sacct["5"].ended_at) == (at(1795470964), None)  # running
    assert (sacct["7"].started_at, sacct["7"].ended_at) == (None, None)  # pending
    assert str(timeout.started_at) == "2026-11-23 21:56:04+00:00"


def test_scontrol_jobs(scontrol: dict[str, JobStatus]) -> None:
    job = scontrol["5"]
    assert (job.name, job.state, job.user, job.node_list) == (NAME, JobState.RUNNING, "root", "localhost")
    assert job.stdout_path == job.stderr_path == "/tmp/rec/out 5.log"  # expanded, with its space
    assert scontrol["14_0"].stdout_path == "/tmp/rec/arr_14_0.out"
    assert scontrol["22"].name == LONG_NAME
    assert (scontrol["9"].exit_code, scontrol["10"].signal) == (3, 9)
    assert (scontrol["11"].state, scontrol["11"].signal) == (JobState.CANCELLED, 15)
    wide = scontrol["7"]
    assert (wide.state, wide.nodes, wide.gpus, wide.reason) == (JobState.PENDING, 2, 4, MULTI_REASON)
    assert scontrol["15_[0-2]"].state is JobState.PENDING
    assert scontrol["17"].gpus == 3
    assert parse_scontrol_jobs(_read("scontrol_show_job_one.txt")) == [job]


def test_the_three_sources_agree_on_each_job(
    squeue_later: dict[str, JobStatus], sacct: dict[str, JobStatus], scontrol: dict[str, JobStatus]
) -> None:
    for job_id in ("5", "6", "7", "8", "9", "10", "11", "12", "14_1", "16", "17", "22"):
        a, b = squeue_later[job_id], sacct[job_id]
        assert (a.state, a.name, a.user, a.partition, a.nodes, a.gpus) == (
            b.state,
            b.name,
            b.user,
            b.partition,
            b.nodes,
            b.gpus,
        ), job_id
        c = scontrol[job_id]
        assert (c.name, c.user, c.partition, c.nodes, c.gpus) == (a.name, a.user, a.partition, a.nodes, a.gpus)


def test_sinfo_nodes_with_a_gpu_job_running() -> None:
    nodes = {(node.name, node.partition): node for node in parse_sinfo(_read("sinfo.txt"))}
    assert set(nodes) == {("localhost", "debug"), ("localhost", "gpu"), ("localhost", "multi"), ("phantom", "multi")}
    local = nodes["localhost", "debug"]
    assert (local.cpus, local.gpus_total, local.gpus_used, local.is_down) == (8, 4, 2, False)
    phantom = nodes["phantom", "multi"]
    assert (phantom.raw_state, phantom.is_down, phantom.gpus_used) == ("down*", True, 0)
    assert [node.partition for node in parse_sinfo(_read("sinfo_gpu.txt"))] == ["gpu"]
    assert [node.name for node in parse_sinfo(_read("sinfo_multi.txt"))] == ["localhost", "phantom"]


def test_scontrol_nodes_agree_with_sinfo() -> None:
    def view(text: str, parse: Callable[[str], list[NodeInfo]]) -> set[tuple[str, str, int, int, int, bool]]:
        return {(n.name, n.partition, n.cpus, n.gpus_total, n.gpus_used, n.is_down) for n in parse(text)}

    assert view(_read("scontrol_show_node.txt"), parse_scontrol_nodes) == view(_read("sinfo.txt"), parse_sinfo)
