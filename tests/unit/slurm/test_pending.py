"""Pending reasons explained from output recorded on the dev cluster (tests/fixtures/slurm/README.md, "Pending
reasons"): a QOS with MaxTRESPerUser=gres/gpu=1, an account with GrpTRES=gres/gpu=1, all GPUs held, a hold, a
job wider than the up nodes, a job longer than its partition allows, a dependency on a failed job, a begin time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from svc_host.slurm import pending_inputs as inputs
from svc_host.slurm.parse import parse_sinfo
from svc_host.slurm.pending import check_time_limit, explain
from svc_host.slurm.pending_job import Context, Explanation, PendingJob
from svc_host.slurm.scontrol import split_oneliner

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"
RECORDED = datetime(2026, 11, 24, 0, 40, 2, tzinfo=UTC)
IDS = {
    "q1": "17432",
    "q2": "17433",
    "a2": "17435",
    "wait": "17437",
    "held": "17438",
    "wide": "17439",
    "long": "17440",
    "after": "17442",
    "later": "17443",
}


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.fixture(scope="module")
def jobs() -> dict[str, PendingJob]:
    found = [
        PendingJob.from_fields(split_oneliner(line)) for line in read("scontrol_show_job_pending.txt").splitlines()
    ]
    return {job.job_id: job for job in found}


@pytest.fixture(scope="module")
def context() -> Context:
    return Context(
        qos=inputs.parse_qos(read("sacctmgr_pending_qos.txt"))["svcrec_pendq"],
        associations=inputs.parse_assoc(read("sacctmgr_pending_assoc.txt")),
        nodes=tuple(parse_sinfo(read("sinfo_pending_gpu.txt")) + parse_sinfo(read("sinfo_pending_multi.txt"))),
        live=tuple(inputs.parse_live_jobs(read("squeue_live.txt"))),
    )


def explained(jobs: dict[str, PendingJob], context: Context, name: str) -> Explanation:
    job = jobs[IDS[name]]
    partitions = inputs.parse_partitions(read("scontrol_show_partition.txt"))
    return explain(job, Context(**{**context.__dict__, "partition": partitions.get(job.partition)}))


def test_qos_gpu_limit_names_the_qos_the_limit_and_what_is_in_use(
    jobs: dict[str, PendingJob], context: Context
) -> None:
    answer = explained(jobs, context, "q2")
    assert answer.reason == "QOSMaxGRESPerUser"
    assert answer.sentence == (
        "Waiting for GPUs: QOS 'svcrec_pendq' allows 1 GPU per user (MaxTRESPerUser gres/gpu=1) and your running "
        "jobs already use 1; this job asks for 1 GPU."
    )
    assert answer.binding is not None
    assert (answer.binding.value, answer.binding.used) == ("gres/gpu=1", "1")
    assert not answer.needs_action


def test_account_gpu_limit_names_the_account(jobs: dict[str, PendingJob], context: Context) -> None:
    answer = explained(jobs, context, "a2")
    assert answer.reason == "AssocGrpGRES"
    assert answer.sentence.startswith(
        "Waiting for GPUs: account 'svcrec_penda' allows 1 GPU for all its jobs together (GrpTRES gres/gpu=1) and "
        "its running jobs already use 1"
    )


def test_resources_says_how_many_gpus_are_free(jobs: dict[str, PendingJob], context: Context) -> None:
    answer = explained(jobs, context, "wait")
    assert answer.reason == "Resources"
    assert "it asks for 1 CPU, 1000M of memory, 2 GPUs on 1 node" in answer.sentence
    assert "partition 'gpu' has 0 of 4 GPUs free now" in answer.sentence


def test_hold_says_how_to_release(jobs: dict[str, PendingJob], context: Context) -> None:
    answer = explained(jobs, context, "held")
    assert answer.sentence == (
        "Job 17438 is held (JobHeldUser): it will not start until it is released (scontrol release 17438)."
    )
    assert answer.needs_action


def test_unavailable_nodes_are_named(jobs: dict[str, PendingJob], context: Context) -> None:
    answer = explained(jobs, context, "wide")
    assert answer.reason.startswith("Nodes required for job are DOWN")
    assert "phantom (down*)" in answer.sentence
    assert "It asks for 2 nodes and partition 'multi' has 1 up" in answer.sentence
    assert answer.needs_action


def test_newer_slurms_req_node_not_avail_names_its_nodes(jobs: dict[str, PendingJob]) -> None:
    job = jobs[IDS["wide"]]
    newer = PendingJob(**{**job.__dict__, "reason": "ReqNodeNotAvail, UnavailableNodes:gpu[07-08]"})
    assert "unavailable: gpu[07-08]" in explain(newer, Context()).sentence


def test_partition_time_limit_compares_asked_and_allowed(jobs: dict[str, PendingJob], context: Context) -> None:
    answer = explained(jobs, context, "long")
    assert answer.sentence.startswith(
        "Job 17440 asks for 00:10:00, more than partition 'short' allows (MaxTime 00:05:00): it will not start there"
    )
    assert answer.needs_action


def test_failed_dependency_is_said_to_never_start(jobs: dict[str, PendingJob], context: Context) -> None:
    answer = explained(jobs, context, "after")
    assert answer.reason == "DependencyNeverSatisfied"
    assert answer.sentence.startswith(
        "Job 17442 will never start: its dependency (afterok on job 17441) can no longer be met"
    )
    assert answer.needs_action


def test_begin_time(jobs: dict[str, PendingJob], context: Context) -> None:
    assert explained(jobs, context, "later").sentence == "Job 17443 may not start before 2026-11-24T01:39:49 (--begin)."


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("QOSMaxJobsPerUserLimit", "allows 2 running jobs per user (MaxJobsPerUser=2) and you already have 1"),
        ("QOSMaxGRESPerJob", "asks for 1 GPU, more than QOS 'svcrec_pendq' allows per job (MaxTRES gres/gpu=0)"),
        ("QOSMaxWallDurationPerJobLimit", "more than QOS 'svcrec_pendq' allows per job (MaxWall 01:00:00)"),
    ],
)
def test_other_qos_limits(jobs: dict[str, PendingJob], reason: str, expected: str) -> None:
    job = PendingJob(**{**jobs[IDS["q2"]].__dict__, "reason": reason})
    qos = inputs.parse_qos("svcrec_pendq|gres/gpu=1|2||||gres/gpu=0|01:00:00|||\n")["svcrec_pendq"]
    live = tuple(inputs.parse_live_jobs(read("squeue_live.txt")))
    assert expected in explain(job, Context(qos=qos, live=live)).sentence


def test_priority_counts_the_pending_jobs_ranked_above(jobs: dict[str, PendingJob], context: Context) -> None:
    job = PendingJob(**{**jobs[IDS["wait"]].__dict__, "reason": "Priority"})
    answer = explain(job, context)
    assert answer.sentence == (
        "Waiting for jobs with a higher priority to start first: 2 pending jobs in partition 'gpu' rank above it."
    )


@pytest.mark.parametrize(
    ("reason", "qos_line", "expected"),
    [
        (
            "QOSGrpGRES",
            "svcrec_pendq||||||||gres/gpu=2||",
            "QOS 'svcrec_pendq' allows 2 GPUs for all its jobs together (GrpTRES gres/gpu=2) and its running jobs "
            "already use 1",
        ),
        (
            "QOSMaxSubmitJobPerUserLimit",
            "svcrec_pendq|||2|||||||",
            "allows 2 submitted (pending or running) jobs per user (MaxSubmitJobsPerUser=2) and you already have 2",
        ),
        (
            "QOSGrpMemLimit",
            "svcrec_pendq||||||||mem=1500M||",
            "Waiting for memory: QOS 'svcrec_pendq' allows 1500M of memory for all its jobs together (GrpTRES "
            "mem=1500M) and its running jobs already use 1000M of memory",
        ),
        (
            "QOSMaxCpuPerUserLimit",
            "svcrec_pendq|cpu=1|||||||||",
            "Waiting for CPUs: QOS 'svcrec_pendq' allows 1 CPU per user (MaxTRESPerUser cpu=1)",
        ),
    ],
)
def test_qos_limits_read_from_sacctmgr_columns(
    jobs: dict[str, PendingJob], context: Context, reason: str, qos_line: str, expected: str
) -> None:
    job = PendingJob(**{**jobs[IDS["q2"]].__dict__, "reason": reason})
    qos = inputs.parse_qos(qos_line + "\n")["svcrec_pendq"]
    assert expected in explain(job, Context(qos=qos, live=context.live)).sentence


def test_assoc_max_jobs_reads_the_users_row(jobs: dict[str, PendingJob]) -> None:
    job = PendingJob(**{**jobs[IDS["a2"]].__dict__, "reason": "AssocMaxJobsLimit"})
    rows = inputs.parse_assoc("svcrec_penda||||||||\nsvcrec_penda|root|1||||||\n")
    live = tuple(inputs.parse_live_jobs(read("squeue_live.txt")))
    assert explain(job, Context(associations=rows, live=live)).sentence == (
        "Waiting for a job slot: your association in account 'svcrec_penda' allows 1 running jobs per user "
        "(MaxJobs=1) and you already have 1."
    )


def test_a_limit_svc_cannot_read_is_said_so(jobs: dict[str, PendingJob]) -> None:
    job = PendingJob(**{**jobs[IDS["a2"]].__dict__, "reason": "AssocGrpCpuLimit"})
    assert "svc could not read its value" in explain(job, Context()).sentence


@pytest.mark.parametrize("reason", ["SomethingNew", "", "Reservation", "launch failed requeued held"])
def test_unknown_reason_gets_an_honest_generic_sentence(jobs: dict[str, PendingJob], reason: str) -> None:
    job = PendingJob(**{**jobs[IDS["held"]].__dict__, "reason": reason})
    sentence = explain(job, Context()).sentence
    assert "17438" in sentence
    assert sentence.endswith(".")


def test_start_estimates_a_year_ahead_are_no_estimate() -> None:
    found = inputs.parse_start(read("squeue_start.txt"), now=RECORDED)
    assert found[IDS["later"]].at == datetime(2026, 11, 24, 1, 39, 49, tzinfo=UTC)
    assert found[IDS["wait"]].at is None  # 2027-11-24: planned behind jobs without a time limit
    assert found[IDS["held"]].at is None  # N/A


def test_test_only_answers() -> None:
    def answer(name: str) -> inputs.TestOnlyAnswer:
        *lines, last = read(name).splitlines()
        return inputs.parse_test_only(int(last.split()[1]), "\n".join(lines), now=RECORDED)

    fits = answer("sbatch_test_only_fits.txt")
    assert fits.refusal is None
    assert fits.estimate is not None
    assert (fits.estimate.nodes, fits.estimate.partition, fits.estimate.processors) == ("localhost", "debug", 1)
    assert fits.estimate.at is None  # the year 4068
    short = answer("sbatch_test_only_short.txt").estimate
    assert short is not None
    assert short.at == datetime(2026, 11, 24, 0, 50, 2, tzinfo=UTC)
    assert answer("sbatch_test_only_too_big.txt").refusal == "Requested node configuration is not available"
    assert answer("sbatch_test_only_no_partition.txt").refusal == (
        "invalid partition specified: nosuchpartition; Invalid partition name specified"
    )


def test_time_limit_check_against_partition() -> None:
    short = inputs.parse_partitions(read("scontrol_show_partition.txt"))["short"]
    assert check_time_limit("10", short) is not None
    assert check_time_limit("00:05:00", short) is None
    assert check_time_limit("garbage", short) is None
