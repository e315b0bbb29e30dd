"""Parsers on hand-written lines in Slurm's documented formats: edge cases the dev cluster cannot show.

Parsers on recorded real output are tested in ``test_parse.py``.
"""

from __future__ import annotations

import pytest

from svc_host.domain.jobs import JobState
from svc_host.errors import SlurmParseError
from svc_host.slurm.parse import (
    parse_sacct,
    parse_sbatch,
    parse_scontrol_jobs,
    parse_scontrol_nodes,
    parse_sinfo,
    parse_squeue,
)
from svc_host.slurm.scontrol import split_oneliner
from svc_host.slurm.values import format_time_limit, gpus_in_gres, gpus_in_tres, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0:00", 0),
        ("0:59", 59),
        ("1:00", 60),
        ("59:59", 3599),
        ("1:02:03", 3723),
        ("00:01:00", 60),
        ("1-00:00:00", 86400),
        ("2-03:04:05", 2 * 86400 + 3 * 3600 + 4 * 60 + 5),
        ("1-02", 86400 + 2 * 3600),
        ("1-02:03", 86400 + 2 * 3600 + 3 * 60),
        ("5", 300),  # a bare number is minutes, as sbatch --time reads it
        (" 1:00\n", 60),
    ],
)
def test_parse_duration(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["UNLIMITED", "INFINITE", "INVALID", "N/A", "NOT_SET", "Partition_Limit", ""])
def test_durations_slurm_has_not_got_are_none(text: str) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize("text", ["abc", "1:2:3:4", "1-", "-1:00", "1:00 PM"])
def test_junk_durations_raise(text: str) -> None:
    with pytest.raises(SlurmParseError, match="unexpected duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "limit"),
    [("1:00", "00:01:00"), ("00:01:00", "00:01:00"), ("1-00:00:00", "1-00:00:00"), ("UNLIMITED", "UNLIMITED")],
)
def test_time_limits_read_alike_from_every_command(text: str, limit: str) -> None:
    assert format_time_limit(text) == limit


def test_partition_limit_is_no_limit_of_the_job() -> None:
    assert format_time_limit("Partition_Limit") is None


@pytest.mark.parametrize(
    ("gres", "gpus"),
    [
        ("gpu:4", 4),
        ("gpu:tesla:4(S:0)", 4),
        ("gpu:4(IDX:0-3)", 4),
        ("gpu:tesla:2(IDX:0,2)", 2),
        ("gpu:0(IDX:N/A)", 0),
        ("gpu:a100:2,gpu:v100:2", 4),
        ("gpu:2(S:0-1),mps:200(S:0-1)", 2),
        ("gres/gpu:2", 2),
        ("gres:gpu:2", 2),
        ("gres:gpu", 1),
        ("gres:gpu:tesla:3", 3),
        ("mps:100", 0),
        ("(null)", 0),
        ("N/A", 0),
        ("", 0),
    ],
)
def test_gpus_in_gres(gres: str, gpus: int) -> None:
    assert gpus_in_gres(gres) == gpus


@pytest.mark.parametrize(
    ("tres", "gpus"),
    [
        ("cpu=2,mem=2000M,node=1,billing=2,gres/gpu=2", 2),
        ("billing=4,cpu=4,gres/gpu=4,mem=4000M,node=2", 4),
        ("cpu=1,gres/gpu=4,gres/gpu:tesla=4", 4),  # typed entry repeats the total
        ("cpu=1,gres/gpu:a100=2,gres/gpu:v100=1", 3),
        ("cpu=1,mem=1000M,node=1", 0),
        ("", 0),
    ],
)
def test_gpus_in_tres(tres: str, gpus: int) -> None:
    assert gpus_in_tres(tres) == gpus


@pytest.mark.parametrize(("stdout", "job_id"), [("123\n", "123"), ("123;svcdev\n", "123"), ("\n  77  \n", "77")])
def test_parse_sbatch(stdout: str, job_id: str) -> None:
    assert parse_sbatch(stdout) == job_id


@pytest.mark.parametrize("stdout", ["", "Submitted batch job 123\n", "sbatch: error: Batch job submission failed"])
def test_parse_sbatch_junk_raises_showing_the_output(stdout: str) -> None:
    with pytest.raises(SlurmParseError, match="sbatch printed no job id"):
        parse_sbatch(stdout)


def test_squeue_name_keeps_delimiters_spaces_and_non_ascii() -> None:
    line = (
        "41|RUNNING|gpu|2|1:02:03|1-00:00:00|cpu=2,mem=2000M,node=2,billing=2,gres/gpu=4|None|svcdev|node[1-2]|"
        "/home/svcdev/o.txt|/home/svcdev/slurm-%j.err|a|b c ünï =x\u2028y\n"
    )
    [job] = parse_squeue(line)
    assert job.name == "a|b c ünï =x\u2028y"
    assert job.state is JobState.RUNNING
    assert (job.nodes, job.gpus) == (2, 4)
    assert job.elapsed_seconds == 3723
    assert job.time_limit == "1-00:00:00"
    assert job.reason is None
    assert job.node_list == "node[1-2]"
    assert job.stdout_path == "/home/svcdev/o.txt"
    assert job.stderr_path is None  # squeue does not expand %j: no guessing


def test_squeue_pending_job_has_no_nodes_yet() -> None:
    [job] = parse_squeue(
        "42_[0-2]|PENDING|debug|1|0:00|UNLIMITED|cpu=1,mem=1000M,node=1,billing=1|Priority|root||||arr\n"
    )
    assert job.job_id == "42_[0-2]"
    assert job.state is JobState.PENDING
    assert job.reason == "Priority"
    assert job.node_list is None
    assert job.gpus == 0
    assert job.time_limit == "UNLIMITED"


@pytest.mark.parametrize(
    ("stdout", "problem"),
    [
        ("41|RUNNING|gpu\n", "line 1"),
        ("\n41|RUNNING|gpu|x|0:01|1:00|cpu=1|None|root|n1|/o|/e|name\n", "line 2.*'x' is not a whole number"),
        ("41|RUNNING|gpu|1|soon|1:00|cpu=1|None|root|n1|/o|/e|name\n", "unexpected duration 'soon'"),
        ("slurm_load_jobs error: Invalid job id specified\n", "expected 13 '\\|'-separated columns"),
        ("|RUNNING|gpu|1|0:01|1:00|cpu=1|None|root|n1|/o|/e|name\n", "is not a Slurm job id"),
    ],
)
def test_bad_squeue_lines_raise_naming_the_line(stdout: str, problem: str) -> None:
    with pytest.raises(SlurmParseError, match=f"squeue.*{problem}"):
        parse_squeue(stdout)


def test_empty_outputs_are_no_records() -> None:
    assert parse_squeue("") == []
    assert parse_sacct("\n") == []
    assert parse_sinfo("") == []
    assert parse_scontrol_jobs("No jobs in the system\n") == []


SACCT_HEADERLESS = (
    # JobID|State|ExitCode|Partition|NNodes|ElapsedRaw|Timelimit|AllocTRES|ReqTRES|User|NodeList|Reason|Submit|Start|
    # End|JobName
    "9|COMPLETED|0:0|debug|1|61|01:00:00|cpu=1,mem=1000M,node=1,billing=1|cpu=1,mem=1000M,node=1,billing=1|root|n1|"
    "None|1767225600|1767225600|1767225661|old\n"
    "9|FAILED|3:0|debug|1|2|UNLIMITED|cpu=1,mem=1000M,node=1,billing=1|cpu=1,mem=1000M,node=1,billing=1|root|n1|"
    "None|1769904000|1769904001|1769904003|new|er\n"
    "9.batch|FAILED|3:0||1|2||cpu=1,mem=1000M,node=1||||None|1769904001|1769904001|1769904003|batch\n"
    "10|PENDING|0:0|multi|2|0|Partition_Limit||billing=4,cpu=4,gres/gpu=4,mem=4000M,node=2|svcdev|None assigned|"
    "Resources|1769904001|Unknown|Unknown|wide\n"
)


def test_sacct_skips_steps_prefers_the_newest_job_of_a_reused_id_and_reads_requests() -> None:
    jobs = {job.job_id: job for job in parse_sacct(SACCT_HEADERLESS)}
    assert sorted(jobs) == ["10", "9"]
    assert (jobs["9"].state, jobs["9"].exit_code, jobs["9"].name) == (JobState.FAILED, 3, "new|er")
    assert jobs["9"].time_limit == "UNLIMITED"
    assert str(jobs["9"].started_at) == "2026-02-01 00:00:01+00:00"  # the newer job's times
    pending = jobs["10"]
    assert (pending.gpus, pending.nodes, pending.node_list, pending.reason) == (4, 2, None, "Resources")
    assert pending.time_limit is None


def test_bad_sacct_line_raises_naming_the_line() -> None:
    with pytest.raises(SlurmParseError, match=r"sacct output on line 1.*'x:y'"):
        parse_sacct("9|FAILED|x:y|debug|1|2|UNLIMITED|||root|n1|None|1769904000|1769904001|1769904003|job\n")


def test_a_time_that_is_not_unix_seconds_raises_naming_the_line() -> None:
    # Slurm's default ISO local time, as a sacct run without SLURM_TIME_FORMAT=%s would print it.
    with pytest.raises(SlurmParseError, match=r"sacct output on line 1.*'2026-02-01T00:00:01'"):
        parse_sacct("9|FAILED|3:0|debug|1|2|UNLIMITED|||root|n1|None|1769904000|2026-02-01T00:00:01|Unknown|job\n")


def test_split_oneliner_keeps_spaces_and_equals_in_free_text() -> None:
    line = "JobId=7 JobName=a b=c  d UserId=root(0) JobState=RUNNING WorkDir=/tmp/x y=z StdOut=/o"
    assert split_oneliner(line) == {
        "JobId": "7",
        "JobName": "a b=c  d",
        "UserId": "root(0)",
        "JobState": "RUNNING",
        "WorkDir": "/tmp/x y=z",
        "StdOut": "/o",
    }


def test_scontrol_job_array_task_and_tres() -> None:
    line = (
        "JobId=12 ArrayJobId=10 ArrayTaskId=2 JobName=arr UserId=svcdev(1001) GroupId=svcdev(1001) "
        "JobState=CANCELLED Reason=None ExitCode=0:15 RunTime=00:00:03 TimeLimit=00:01:00 Partition=gpu "
        "NodeList=localhost NumNodes=1 TRES=cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1 "
        "StdErr=/tmp/a b.err StdOut=/tmp/a b.out"
    )
    [job] = parse_scontrol_jobs(line)
    assert job.job_id == "10_2"
    assert (job.user, job.state, job.exit_code, job.signal) == ("svcdev", JobState.CANCELLED, 0, 15)
    assert (job.gpus, job.elapsed_seconds, job.time_limit) == (1, 3, "00:01:00")
    assert (job.stdout_path, job.stderr_path) == ("/tmp/a b.out", "/tmp/a b.err")


def test_scontrol_pending_job_node_range_and_per_node_gres() -> None:
    line = "JobId=5 JobName=w UserId=root(0) JobState=PENDING Reason=Resources NumNodes=2-2 TresPerNode=gres:gpu:2"
    [job] = parse_scontrol_jobs(line)
    assert (job.nodes, job.gpus, job.node_list, job.reason) == (2, 4, None, "Resources")


def test_scontrol_line_that_is_no_job_raises() -> None:
    with pytest.raises(SlurmParseError, match=r"scontrol show job output on line 1.*no JobId="):
        parse_scontrol_jobs("slurm_load_jobs error: Invalid job id specified")


def test_sinfo_strips_the_default_partition_star() -> None:
    [node] = parse_sinfo("n1|debug*|mixed|8|gpu:tesla:4(S:0)|gpu:tesla:2(IDX:0-1)\n")
    assert (node.name, node.partition, node.cpus, node.gpus_total, node.gpus_used) == ("n1", "debug", 8, 4, 2)


def test_bad_sinfo_line_raises() -> None:
    with pytest.raises(SlurmParseError, match="sinfo output on line 1"):
        parse_sinfo("n1 debug* idle 8 gpu:4 gpu:0\n")


def test_scontrol_node_in_two_partitions_is_two_records() -> None:
    line = (
        "NodeName=n1 Arch=x86_64 CPUAlloc=2 CPUTot=8 Gres=gpu:4 NodeAddr=n1 State=MIXED "
        "Partitions=debug,gpu CfgTRES=cpu=8,gres/gpu=4 AllocTRES=cpu=2,gres/gpu=2"
    )
    nodes = parse_scontrol_nodes(line)
    assert [(n.partition, n.gpus_total, n.gpus_used, n.cpus) for n in nodes] == [("debug", 4, 2, 8), ("gpu", 4, 2, 8)]
