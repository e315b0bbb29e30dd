"""Argv builders: exact argv lists, never shell strings, and refusal of anything that is not a job id."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from svc_host.slurm.argv import (
    SACCT_FIELDS,
    SQUEUE_FIELDS,
    program,
    sacct_argv,
    sbatch_argv,
    scancel_argv,
    scontrol_show_job_argv,
    scontrol_show_node_argv,
    sinfo_argv,
    squeue_argv,
)


def test_sbatch_reads_the_script_from_stdin_and_prints_a_parsable_id() -> None:
    assert sbatch_argv() == ["sbatch", "--parsable"]
    assert sbatch_argv(comment="svc:1f") == ["sbatch", "--parsable", "--comment=svc:1f"]  # one argv word


def test_squeue_for_tracked_jobs_asks_for_every_state_of_those_jobs() -> None:
    argv = squeue_argv(["12", "13_4"])
    assert argv[0] == "squeue"
    assert "--noheader" in argv
    assert "--states=all" in argv
    assert "--jobs=12,13_4" in argv
    assert "--all" in argv  # hidden partitions too


def test_squeue_without_ids_lists_the_live_queue() -> None:
    argv = squeue_argv()
    assert not any(arg.startswith(("--jobs", "--states")) for arg in argv)
    assert squeue_argv(user="svcdev")[-1] == "--user=svcdev"


def test_squeue_format_prints_whole_columns_with_array_task_ids_first_and_the_name_last() -> None:
    fmt = next(arg for arg in squeue_argv() if arg.startswith("--Format="))
    assert fmt == (
        "--Format=JobArrayID:0|,State:0|,Partition:0|,NumNodes:0|,TimeUsed:0|,TimeLimit:0|,tres-alloc:0|,"
        "Reason:0|,UserName:0|,NodeList:0|,STDOUT:0|,STDERR:0|,Name:0"
    )
    assert len(SQUEUE_FIELDS) == fmt.count(":0")
    assert "--array" in squeue_argv()  # one line per pending array task


def test_sacct_asks_for_allocations_of_those_jobs_from_long_ago() -> None:
    argv = sacct_argv(["7", "8_1"])
    assert argv[:4] == ["env", "SLURM_TIME_FORMAT=%s", "sacct", "--parsable2"]  # times as Unix seconds
    assert {"--noheader", "--allocations", "--jobs=7,8_1"} <= set(argv)
    start = next(arg for arg in argv if arg.startswith("--starttime="))
    assert start.removeprefix("--starttime=") < "2020"
    fields = next(arg for arg in argv if arg.startswith("--format=")).removeprefix("--format=").split(",")
    assert fields == list(SACCT_FIELDS)
    assert fields[0] == "JobID"
    assert fields[-3:] == ["Start", "End", "JobName"]


def test_scontrol() -> None:
    assert scontrol_show_job_argv() == ["scontrol", "--oneliner", "show", "job"]
    assert scontrol_show_job_argv("42") == ["scontrol", "--oneliner", "show", "job", "42"]
    assert scontrol_show_node_argv() == ["scontrol", "--oneliner", "show", "node"]


def test_sinfo_lists_every_node_of_every_visible_partition_with_gres_in_use() -> None:
    argv = sinfo_argv()
    assert {"--Node", "--noheader"} <= set(argv)
    assert "--all" not in argv  # hidden partitions are not offered to users
    fmt = next(arg for arg in argv if arg.startswith("--Format="))
    assert fmt == "--Format=NodeList:0|,Partition:0|,StateLong:0|,CPUs:0|,Gres:0|,GresUsed:0"


def test_sinfo_for_one_partition_names_it() -> None:
    argv = sinfo_argv("multi")
    assert argv[-1] == "--partition=multi"  # a hidden partition asked for by name is shown


def test_scancel() -> None:
    assert scancel_argv(["5", "6_2", "7_[1-3]", "8+0"]) == ["scancel", "5", "6_2", "7_[1-3]", "8+0"]


@pytest.mark.parametrize("bad", ["", "abc", "5;rm -rf /", "--signal=KILL", "5 6", "1,2", "-5", "5_"])
@pytest.mark.parametrize("build", [scancel_argv, sacct_argv, squeue_argv])
def test_anything_but_a_job_id_is_refused(build: Callable[[list[str]], list[str]], bad: str) -> None:
    with pytest.raises(ValueError, match="invalid Slurm job id"):
        build([bad])


def test_no_ids_is_refused_rather_than_meaning_every_job() -> None:
    with pytest.raises(ValueError, match="no job ids"):
        scancel_argv([])
    with pytest.raises(ValueError, match="no job ids"):
        sacct_argv([])


def test_a_bare_string_is_not_taken_for_a_list_of_ids() -> None:
    with pytest.raises(TypeError, match="sequence of ids"):
        scancel_argv("123")


def test_scontrol_refuses_a_bad_id() -> None:
    with pytest.raises(ValueError, match="invalid Slurm job id"):
        scontrol_show_job_argv("1 2")


def test_messages_name_the_program_past_an_env_prefix() -> None:
    assert program(sacct_argv(["7"])) == "sacct"
    assert program(scancel_argv(["7"])) == "scancel"
    assert program(["env", "--", "A=b", "squeue"]) == "squeue"
