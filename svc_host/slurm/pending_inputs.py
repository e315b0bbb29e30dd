"""What an explanation of a pending job reads from Slurm: argv builders and their parsers.

Each query reads only the fields :mod:`svc_host.slurm.pending` needs: a job's QOS limits and its
association's limits (``sacctmgr -nP``), partitions' MaxTime (``scontrol show partition``), the live jobs the
limits count (``squeue``), the scheduler's start estimates (``squeue --start``) and the answer of
``sbatch --test-only`` for a job not yet submitted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from svc_host.errors import SlurmParseError
from svc_host.slurm.argv import DELIMITER, SACCT_TIME_FORMAT, checked_ids, format_fields, sbatch_argv
from svc_host.slurm.rows import delimited_rows
from svc_host.slurm.scontrol import split_oneliner

QOS_FIELDS: Final = (
    "Name",
    "MaxTRESPU",
    "MaxJobsPU",
    "MaxSubmitPU",
    "MaxTRESPA",
    "MaxJobsPA",
    "MaxTRES",
    "MaxWall",
    "GrpTRES",
    "GrpJobs",
    "GrpSubmit",
)
"""``sacctmgr show qos`` columns: the limits a ``QOS*`` pending reason names."""

ASSOC_FIELDS: Final = (
    "Account",
    "User",
    "MaxJobs",
    "MaxSubmit",
    "MaxTRES",
    "MaxWall",
    "GrpTRES",
    "GrpJobs",
    "GrpSubmit",
)
"""``sacctmgr show assoc`` columns: the limits an ``Assoc*`` pending reason names."""

LIVE_FIELDS: Final = ("JobID", "State", "UserName", "Account", "QOS", "Partition", "PriorityLong", "tres-alloc")
"""squeue columns of the live jobs a limit counts (running ones) and a priority wait is behind (pending ones)."""

_TEST_ONLY = re.compile(
    r"Job (?P<id>\d+) to start at (?P<at>\S+) using (?P<cpus>\d+) processors on nodes (?P<nodes>\S+)"
    r" in partition (?P<partition>\S+)"
)
_NO_ESTIMATE: Final = timedelta(days=300)
"""A start estimate this far away is Slurm's "no estimate": the backfill scheduler plans a job behind jobs without
a time limit a year ahead, and ``sbatch --test-only`` then prints a year such as 4068."""


def qos_argv(names: list[str]) -> list[str]:
    """``sacctmgr -nP show qos where name=a,b format=<QOS_FIELDS>``."""
    return [
        "sacctmgr",
        "-nP",
        "show",
        "qos",
        "where",
        f"name={','.join(_names(names))}",
        f"format={','.join(QOS_FIELDS)}",
    ]


def assoc_argv(accounts: list[str]) -> list[str]:
    """``sacctmgr -nP show assoc where account=a,b format=<ASSOC_FIELDS>``: each account's own row and its users'."""
    return [
        "sacctmgr",
        "-nP",
        "show",
        "assoc",
        "where",
        f"account={','.join(_names(accounts))}",
        f"format={','.join(ASSOC_FIELDS)}",
    ]


def partitions_argv() -> list[str]:
    """``scontrol --oneliner show partition``: every partition, hidden ones included, one line each."""
    return ["scontrol", "--oneliner", "--all", "show", "partition"]


def live_jobs_argv() -> list[str]:
    """squeue of every running and pending job with the :data:`LIVE_FIELDS` columns."""
    return [
        "squeue",
        "--noheader",
        "--all",
        "--states=RUNNING,PENDING",
        f"--Format={format_fields(LIVE_FIELDS, DELIMITER)}",
    ]


def start_argv(job_ids: list[str]) -> list[str]:
    """The expected start of many pending jobs at once (``squeue --start``'s StartTime column, with a format
    of its own since ``--start`` would replace it): ``<id>|<expected start>|<planned nodes>`` per job, the start in
    Unix seconds (``SLURM_TIME_FORMAT=%s``, like sacct's times) so it means one moment whatever the cluster's zone."""
    return [
        "env",
        SACCT_TIME_FORMAT,
        "squeue",
        "--noheader",
        "--all",
        "--states=PENDING",
        f"--jobs={','.join(checked_ids(job_ids))}",
        f"--Format={format_fields(('JobID', 'StartTime', 'SchedNodes'), DELIMITER)}",
    ]


def _names(names: list[str]) -> list[str]:
    for name in names:
        if not re.fullmatch(r"[A-Za-z0-9_.+-]{1,128}", name):
            msg = f"invalid Slurm QOS or account name {name!r}"
            raise ValueError(msg)
    return names


@dataclass(frozen=True)
class Limits:
    """The limits of one QOS or one association (``account``, ``user``; user empty for the account's own row).

    ``tres`` maps a limit's column (``MaxTRESPU``, ``GrpTRES``, ``MaxTRES``, ...) to its ``{tres: value}``;
    ``counts`` a job-count column (``MaxJobsPU``, ``GrpJobs``, ``MaxJobs``, ...) to its number; ``wall`` the
    per-job MaxWall as Slurm printed it."""

    name: str
    user: str = ""
    tres: dict[str, dict[str, str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    wall: str = ""


def tres_map(text: str) -> dict[str, str]:
    """``cpu=2,gres/gpu=1`` as ``{"cpu": "2", "gres/gpu": "1"}`` (empty and ``(null)`` are ``{}``)."""
    found = {}
    for item in text.split(","):
        key, sep, value = item.strip().partition("=")
        if sep and key:
            found[key] = value
    return found


def _limits(name: str, user: str, columns: dict[str, str]) -> Limits:
    tres = {key: tres_map(value) for key, value in columns.items() if "TRES" in key and value}
    counts = {}
    for key, value in columns.items():
        if ("Jobs" in key or "Submit" in key) and value:
            if not value.isdigit():
                msg = f"sacctmgr printed {key}={value!r}: expected a number of jobs"
                raise SlurmParseError(msg)
            counts[key] = int(value)
    return Limits(name=name, user=user, tres=tres, counts=counts, wall=columns.get("MaxWall", ""))


def parse_qos(stdout: str) -> dict[str, Limits]:
    """QOS limits by QOS name, from :func:`qos_argv`'s output."""
    return {
        row["Name"]: _limits(row["Name"], "", row) for _, row in delimited_rows("sacctmgr show qos", stdout, QOS_FIELDS)
    }


def parse_assoc(stdout: str) -> dict[tuple[str, str], Limits]:
    """Association limits by ``(account, user)`` (user ``""`` for the account's own row), from
    :func:`assoc_argv`'s output."""
    rows = [row for _, row in delimited_rows("sacctmgr show assoc", stdout, ASSOC_FIELDS)]
    return {(row["Account"], row["User"]): _limits(row["Account"], row["User"], row) for row in rows}


def parse_partitions(stdout: str) -> dict[str, dict[str, str]]:
    """Each partition's ``Key=value`` fields by name, from :func:`partitions_argv`'s output."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith("PartitionName="):
            fields = split_oneliner(line)
            found[fields["PartitionName"]] = fields
    return found


@dataclass(frozen=True)
class LiveJob:
    """One running or pending job as a limit counts it."""

    job_id: str
    state: str
    user: str
    account: str
    qos: str
    partition: str
    priority: int
    tres: dict[str, str]


def parse_live_jobs(stdout: str) -> list[LiveJob]:
    """Running and pending jobs from :func:`live_jobs_argv`'s output."""
    jobs = []
    for _, row in delimited_rows("squeue", stdout, LIVE_FIELDS):
        priority = row["PriorityLong"].strip()
        jobs.append(
            LiveJob(
                job_id=row["JobID"].strip(),
                state=row["State"].strip(),
                user=row["UserName"].strip(),
                account=row["Account"].strip(),
                qos=row["QOS"].strip(),
                partition=row["Partition"].strip(),
                priority=int(priority) if priority.isdigit() else 0,
                tres=tres_map(row["tres-alloc"]),
            )
        )
    return jobs


@dataclass(frozen=True)
class StartEstimate:
    """When and where Slurm expects a job to start; ``at`` is ``None`` when it has no estimate."""

    at: datetime | None
    nodes: str | None = None
    partition: str | None = None
    processors: int | None = None


def test_only_argv() -> list[str]:
    """``sbatch --test-only`` (svc's submission argv, :func:`svc_host.slurm.argv.sbatch_argv`) printing its start time
    in Unix seconds; the script goes to its stdin."""
    return ["env", SACCT_TIME_FORMAT, *sbatch_argv(test_only=True)]


def slurm_time(text: str, *, now: datetime) -> datetime | None:
    """A time Slurm printed under ``SLURM_TIME_FORMAT=%s`` as an aware datetime; ``N/A``, ``Unknown``, empty and
    estimates a year or more away (Slurm's "no estimate") are ``None``."""
    text = text.strip()
    if not text.isdigit():
        return None
    try:
        moment = datetime.fromtimestamp(int(text), UTC)
    except (OverflowError, OSError, ValueError):  # --test-only's "never" lies tens of thousands of years ahead
        return None
    if moment - now >= _NO_ESTIMATE:
        return None
    return moment


def parse_start(stdout: str, *, now: datetime) -> dict[str, StartEstimate]:
    """Start estimates by job id from :func:`start_argv`'s output."""
    found = {}
    for _, row in delimited_rows("squeue --start", stdout, ("JobID", "StartTime", "SchedNodes")):
        nodes = row["SchedNodes"].strip()
        found[row["JobID"].strip()] = StartEstimate(
            at=slurm_time(row["StartTime"], now=now), nodes=None if nodes in {"", "(null)"} else nodes
        )
    return found


@dataclass(frozen=True)
class TestOnlyAnswer:
    """``sbatch --test-only``: where and when the job would start, or why Slurm refuses it."""

    estimate: StartEstimate | None
    refusal: str | None


def parse_test_only(exit_code: int, stderr: str, *, now: datetime) -> TestOnlyAnswer:
    """Read ``sbatch --test-only``: it prints ``sbatch: Job N to start at T using C processors on nodes X in
    partition P`` on stderr, or errors (``sbatch: error: ...``, ``allocation failure: ...``) and exits non-zero."""
    match = _TEST_ONLY.search(stderr)
    if exit_code == 0 and match is not None:
        return TestOnlyAnswer(
            estimate=StartEstimate(
                at=slurm_time(match["at"], now=now),
                nodes=match["nodes"],
                partition=match["partition"],
                processors=int(match["cpus"]),
            ),
            refusal=None,
        )
    reasons = []
    for line in stderr.splitlines():
        text = line.strip().removeprefix("sbatch: ").removeprefix("error: ").removeprefix("allocation failure: ")
        text = text.removeprefix("Batch job submission failed: ").strip()
        if text and text not in reasons:
            reasons.append(text)
    return TestOnlyAnswer(estimate=None, refusal="; ".join(reasons) or f"sbatch --test-only exited {exit_code}")
