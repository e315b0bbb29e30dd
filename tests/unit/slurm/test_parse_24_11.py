"""svc's Slurm parsers on output recorded from a real Slurm 24.11 (lab24; tests/fixtures/slurm-24.11/README.md).

The recording submitted, as svcdev over lab24's sshd: 20 ``true``, 21 ``exit 3``, 22 ``kill -9 $$``,
23 ``--time=1`` (running, later TIMEOUT), 24 cancelled by svcdev (uid 1000), 25 named ``a|b c ünï`` with
``-o 'out %j.log'``, 26 ``--gres=gpu:a100:1``, 27 ``--gpus=2`` (one a100, one v100), 28 ``--gres=gpu:v100:2``
(pending: Resources), array 29 ``0-5%2`` (two running, four held back by JobArrayTaskLimit), array 30
``0-3%2`` (task 2 exits 3), 31 ``--hold``, 36 a script on stdin tagged ``svc-rec-24``. The same ids appear in
every file. GPU types and GPU counts of nodes are in test_gpu_shapes.py; the 22.05 recordings are read
by test_parse.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.slurm import pending_inputs
from svc_host.slurm.arrays import task_ids
from svc_host.slurm.parse import parse_sacct, parse_sbatch, parse_scontrol_jobs, parse_squeue
from svc_host.slurm.tags import find_tagged
from svc_host.slurm.usage import parse_sacct_usage

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm-24.11"
NAME = "a|b c ünï"
RECORDED = datetime(2026, 11, 27, 0, 26, 17, tzinfo=UTC)
"""When squeue_start.txt and sbatch_test_only.txt were recorded (commands.tsv)."""
NO_LIMIT = "UNLIMITED"
"""How a job without a time limit reads, although Slurm 24.11 prints 365-00:00:00 for a running one of a partition
without MaxTime (pending, it says UNLIMITED): Slurm's stand-in for none, not a limit the user asked for."""


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _by_id(jobs: list[JobStatus]) -> dict[str, JobStatus]:
    by_id = {job.job_id: job for job in jobs}
    assert len(by_id) == len(jobs), "one record per job id"
    return by_id


def _at(epoch: int) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


@pytest.fixture(scope="module")
def squeue() -> dict[str, JobStatus]:
    return _by_id(parse_squeue(_read("squeue_jobs.txt")))


@pytest.fixture(scope="module")
def squeue_later() -> dict[str, JobStatus]:
    return _by_id(parse_squeue(_read("squeue_jobs_later.txt")))


@pytest.fixture(scope="module")
def sacct() -> dict[str, JobStatus]:
    return _by_id(parse_sacct(_read("sacct_jobs.txt")))


@pytest.fixture(scope="module")
def scontrol() -> dict[str, JobStatus]:
    return _by_id(parse_scontrol_jobs(_read("scontrol_show_job.txt")))


def test_sbatch_job_id() -> None:
    assert parse_sbatch(_read("sbatch.txt")) == "36"


def test_squeue_states_of_every_kind_of_job(squeue: dict[str, JobStatus]) -> None:
    states = {job_id: job.state.value for job_id, job in squeue.items()}
    assert states == {
        "20": "COMPLETED", "21": "FAILED", "22": "FAILED", "23": "RUNNING", "24": "CANCELLED", "25": "RUNNING",
        "26": "RUNNING", "27": "RUNNING", "28": "PENDING", "29_0": "RUNNING", "29_1": "RUNNING", "29_2": "PENDING",
        "29_3": "PENDING", "29_4": "PENDING", "29_5": "PENDING", "30_0": "RUNNING", "30_1": "RUNNING",
        "30_2": "PENDING", "30_3": "PENDING", "31": "PENDING",
    }  # fmt: skip


def test_squeue_names_reasons_and_paths(squeue: dict[str, JobStatus]) -> None:
    assert (squeue["25"].name, squeue["29_3"].name) == (NAME, "arr")
    reasons = {job_id: squeue[job_id].reason for job_id in ("20", "21", "22", "28", "29_2", "31")}
    assert reasons == {
        "20": None,
        "21": "NonZeroExitCode",
        "22": "RaisedSignal:9(Killed)",
        "28": "Resources",
        "29_2": "JobArrayTaskLimit",
        "31": "JobHeldUser",
    }
    # 24.11 prints output paths unexpanded too ("slurm-%j.out", "out %j.log"): left out, scontrol has them.
    assert {job.stdout_path for job in squeue.values()} == {None}
    assert {job.stderr_path for job in squeue.values()} == {None}


def test_squeue_running_and_pending_details(squeue: dict[str, JobStatus]) -> None:
    timeout = squeue["23"]
    assert (timeout.user, timeout.node_list, timeout.elapsed_seconds, timeout.time_limit) == (
        "svcdev",
        "node24",
        5,
        "00:01:00",
    )
    assert (squeue["25"].time_limit, squeue["31"].time_limit) == (NO_LIMIT, "UNLIMITED")
    pending = squeue["28"]
    assert (pending.partition, pending.node_list, pending.nodes, pending.elapsed_seconds) == ("gpu", None, 1, 0)


def test_squeue_gpus_are_the_whole_jobs_with_typed_tres(squeue: dict[str, JobStatus]) -> None:
    # gres/gpu=2,gres/gpu:a100=1,gres/gpu:v100=1 is two GPUs, not four
    gpus = {job_id: squeue[job_id].gpus for job_id in ("25", "26", "27", "28")}
    assert gpus == {"25": 0, "26": 1, "27": 2, "28": 2}


def test_squeue_keeps_recently_ended_jobs_with_their_final_state(squeue_later: dict[str, JobStatus]) -> None:
    timeout = squeue_later["23"]
    assert (timeout.state, timeout.reason, timeout.elapsed_seconds) == (JobState.TIMEOUT, "TimeLimit", 70)
    assert (squeue_later["30_2"].state, squeue_later["30_2"].reason) == (JobState.FAILED, "NonZeroExitCode")
    assert squeue_later["30_3"].state is JobState.COMPLETED


def test_squeue_queue_and_user_views(squeue: dict[str, JobStatus]) -> None:
    queue = _by_id(parse_squeue(_read("squeue_queue.txt")))
    assert all(not job.state.is_terminal for job in queue.values())
    assert {"36", "31", "28", "29_5"} <= set(queue)
    assert queue["26"].model_dump(exclude={"elapsed_seconds"}) == squeue["26"].model_dump(exclude={"elapsed_seconds"})
    mine = _by_id(parse_squeue(_read("squeue_user.txt")))
    assert set(mine) == set(queue)
    assert {job.user for job in mine.values()} == {"svcdev"}


def test_squeue_array_lists_every_task_on_its_own_line() -> None:
    tasks = _by_id(parse_squeue(_read("squeue_array_tasks.txt")))
    assert {job_id: job.state.value for job_id, job in tasks.items()} == {
        "29_0": "RUNNING", "29_1": "RUNNING", "29_2": "PENDING", "29_3": "PENDING", "29_4": "PENDING",
        "29_5": "PENDING",
    }  # fmt: skip


def test_sacct_final_states_exit_codes_and_signals(sacct: dict[str, JobStatus]) -> None:
    ended = {
        job_id: (job.state.value, job.exit_code, job.signal) for job_id, job in sacct.items() if job.state.is_terminal
    }
    assert ended == {
        "20": ("COMPLETED", 0, 0),
        "21": ("FAILED", 3, 0),
        "22": ("FAILED", 0, 9),  # kill -9 of the batch shell
        "23": ("TIMEOUT", 0, 0),
        "24": ("CANCELLED", 0, 0),
        "30_0": ("COMPLETED", 0, 0),
        "30_1": ("COMPLETED", 0, 0),
        "30_2": ("FAILED", 3, 0),
        "30_3": ("COMPLETED", 0, 0),
    }
    assert (sacct["24"].raw_state, sacct["24"].user) == ("CANCELLED by 1000", "svcdev")


def test_sacct_live_jobs_arrays_and_names(sacct: dict[str, JobStatus]) -> None:
    assert (sacct["25"].state, sacct["25"].exit_code, sacct["25"].name) == (JobState.RUNNING, None, NAME)
    pending = sacct["29_[2-5%2]"]  # the tasks held back, one record for the range
    assert (pending.state, pending.reason, pending.node_list) == (JobState.PENDING, "JobArrayTaskLimit", None)
    assert task_ids(pending.job_id) == ["29_2", "29_3", "29_4", "29_5"]
    assert not any("." in job_id for job_id in sacct)
    assert (sacct["28"].gpus, sacct["28"].node_list, sacct["28"].time_limit) == (2, None, None)  # Partition_Limit
    assert (sacct["26"].gpus, sacct["27"].gpus, sacct["20"].gpus) == (1, 2, 0)
    assert (sacct["23"].time_limit, sacct["25"].time_limit) == ("00:01:00", NO_LIMIT)


def test_sacct_start_and_end_are_utc_times_while_known(sacct: dict[str, JobStatus]) -> None:
    timeout = sacct["23"]
    assert (timeout.started_at, timeout.ended_at, timeout.elapsed_seconds) == (_at(1795739170), _at(1795739240), 70)
    assert (sacct["25"].started_at, sacct["25"].ended_at) == (_at(1795739170), None)  # running
    assert (sacct["28"].started_at, sacct["28"].ended_at) == (None, None)  # pending
    assert str(timeout.started_at) == "2026-11-27 00:26:10+00:00"


def test_sacct_array_tasks() -> None:
    tasks = _by_id(parse_sacct(_read("sacct_array_tasks.txt")))
    assert {job_id: (job.state.value, job.exit_code) for job_id, job in tasks.items()} == {
        "30_0": ("COMPLETED", 0),
        "30_1": ("COMPLETED", 0),
        "30_2": ("FAILED", 3),
        "30_3": ("COMPLETED", 0),
    }


def test_scontrol_jobs(scontrol: dict[str, JobStatus]) -> None:
    job = scontrol["25"]
    assert (job.name, job.state, job.user, job.node_list, job.time_limit) == (
        NAME,
        JobState.RUNNING,
        "svcdev",
        "node24",
        NO_LIMIT,
    )
    assert job.stdout_path == job.stderr_path == "/home/svcdev/rec/out 25.log"  # expanded, with its space
    assert scontrol["29_0"].stdout_path == "/home/svcdev/rec/arr_29_0.out"
    assert (scontrol["21"].exit_code, scontrol["22"].signal, scontrol["30_2"].exit_code) == (3, 9, 3)
    assert (scontrol["28"].state, scontrol["28"].gpus, scontrol["28"].reason) == (JobState.PENDING, 2, "Resources")
    assert (scontrol["26"].gpus, scontrol["27"].gpus) == (1, 2)
    [one] = parse_scontrol_jobs(_read("scontrol_show_job_one.txt"))  # a second later
    assert (one.elapsed_seconds, scontrol["26"].elapsed_seconds) == (9, 8)
    assert one.model_copy(update={"elapsed_seconds": 8}) == scontrol["26"]


def test_scontrol_array_records_of_tasks_that_never_started(scontrol: dict[str, JobStatus]) -> None:
    """24.11 shows an array's pending remainder as ``ArrayTaskId=2-5%2`` and, once it is gone (array 10 was
    cancelled with tasks pending), as ``ArrayTaskId=4294967294`` (NO_VAL), with ``%a`` expanded to that number."""
    pending = scontrol["29_[2-5%2]"]
    assert (pending.state, pending.reason, pending.stdout_path) == (JobState.PENDING, "JobArrayTaskLimit", None)
    assert not [job_id for job_id in scontrol if "4294967294" in job_id]
    never_started = scontrol["10"]  # named as sacct names it: the array's own id
    assert (never_started.state, never_started.stdout_path) == (JobState.CANCELLED, None)
    assert {"10_0", "10_1"} <= set(scontrol)


def test_the_three_sources_agree_on_each_job(
    squeue_later: dict[str, JobStatus], sacct: dict[str, JobStatus], scontrol: dict[str, JobStatus]
) -> None:
    for job_id in ("20", "21", "22", "23", "24", "25", "26", "27", "28", "29_0", "30_2", "31"):
        a, b, c = squeue_later[job_id], sacct[job_id], scontrol[job_id]
        view = (a.state, a.name, a.user, a.partition, a.nodes, a.gpus)
        assert (b.state, b.name, b.user, b.partition, b.nodes, b.gpus) == view, job_id
        assert (c.name, c.user, c.partition, c.nodes, c.gpus) == view[1:], job_id


def test_usage_of_ended_jobs() -> None:
    found = parse_sacct_usage(_read("sacct_usage.txt"))
    assert set(found) == {"20", "21", "22", "23", "24", "30_0", "30_2"}
    timeout = found["23"]
    assert (timeout.cpus, timeout.mem_bytes, timeout.gpus) == (1, 1000 * 1024**2, 0)
    assert (timeout.time_limit_seconds, timeout.elapsed_seconds) == (60, 70)
    assert timeout.max_rss_bytes == 3252 * 1024  # the batch step's MaxRSS
    assert timeout.cpu_seconds == pytest.approx(0.001)
    assert found["30_0"].max_rss_bytes == 3268 * 1024
    assert found["20"].max_rss_bytes is None  # too short for a sample
    assert found["20"].time_limit_seconds == 0  # 24.11 records "no limit" as 365 days: read as no limit


def test_pending_inputs_live_jobs_and_priorities() -> None:
    live = {job.job_id: job for job in pending_inputs.parse_live_jobs(_read("squeue_live.txt"))}
    assert (live["28"].partition, live["28"].priority, live["28"].tres["gres/gpu:v100"]) == ("gpu", 4294901738, "2")
    assert (live["31"].state, live["31"].priority) == ("PENDING", 0)  # held
    assert {job.account for job in live.values()} == {"svcdev"}


def test_pending_inputs_start_estimates() -> None:
    found = pending_inputs.parse_start(_read("squeue_start.txt"), now=RECORDED)
    assert set(found) == {"28", "29", "31"}
    assert found["28"].at is None  # a year ahead: behind running jobs whose limit is 365 days
    assert (found["31"].at, found["31"].nodes) == (None, None)  # N/A, (null)


def test_pending_inputs_test_only_and_partitions() -> None:
    answer = pending_inputs.parse_test_only(0, _read("sbatch_test_only.txt"), now=RECORDED)
    assert answer.refusal is None
    assert answer.estimate == pending_inputs.StartEstimate(at=None, nodes="node24", partition="gpu", processors=1)
    partitions = pending_inputs.parse_partitions(_read("scontrol_show_partition.txt"))
    assert set(partitions) == {"debug", "gpu"}
    assert (partitions["debug"]["Default"], partitions["gpu"]["MaxTime"]) == ("YES", "UNLIMITED")


def test_a_submission_is_found_by_its_tag() -> None:
    assert find_tagged(_read("squeue_lookup.txt"), "svc-rec-24") == "36"
    assert find_tagged(_read("squeue_lookup.txt"), "svc-rec-other") is None
