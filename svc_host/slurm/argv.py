"""Argv builders for the Slurm commands svc runs: lists of str, never shell strings.

The column lists (:data:`SQUEUE_FIELDS`, :data:`SACCT_FIELDS`, :data:`SINFO_FIELDS`) are shared
with :mod:`svc_host.slurm.parse`, so a format and its parser cannot drift apart. Columns are
joined by ``|``; the job name comes last because names may contain ``|`` too, and the parsers
split with ``maxsplit`` so the last column keeps the rest of the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from svc_host.slurm import arrays

if TYPE_CHECKING:
    from collections.abc import Sequence

SQUEUE_FIELDS: Final = (
    "JobArrayID",  # 123, or 123_4 for an array task
    "State",  # long name: RUNNING, COMPLETING, ...
    "Partition",
    "NumNodes",  # allocated, or requested while pending
    "TimeUsed",  # [D-][H:]M:SS
    "TimeLimit",  # [D-][H:]M:SS or UNLIMITED
    "tres-alloc",  # allocated TRES, or requested while pending: the job's GPUs as gres/gpu=N
    "Reason",  # None while running
    "UserName",
    "NodeList",  # empty while pending
    "STDOUT",  # as given: squeue does not expand %j and friends
    "STDERR",
    "Name",  # last: may contain "|"
)
"""squeue ``--Format`` columns in output order."""

SACCT_FIELDS: Final = (
    "JobID",  # 123, 123_4 (array task), 123.batch (step: skipped)
    "State",  # CANCELLED by 1001
    "ExitCode",  # <code>:<signal>
    "Partition",
    "NNodes",
    "ElapsedRaw",  # seconds
    "Timelimit",  # [D-]HH:MM:SS, UNLIMITED or Partition_Limit
    "AllocTRES",  # empty until allocated
    "ReqTRES",  # what the job asked for: the GPUs of a pending job
    "User",
    "NodeList",  # "None assigned" while pending
    "Reason",
    "Submit",  # tells apart two jobs with one id after slurmctld lost its state
    "Start",  # Unknown (or None) until the job starts
    "End",  # Unknown until the job ends
    "JobName",  # last: may contain "|"
)
"""sacct ``--format`` columns in output order; the times are Unix seconds (:data:`SACCT_TIME_FORMAT`)."""

SACCT_USAGE_FIELDS: Final = (
    "JobID",  # 123 (the allocation: what was given) and its steps 123.batch, 123.0 (what was used)
    "State",  # accounting may still call a job that just ended RUNNING: its usage is not final yet
    "NCPUS",  # CPUs allocated
    "AllocTRES",  # cpu=4,mem=2G,node=1,gres/gpu=2 on the allocation
    "ReqMem",  # what was asked: 2G, or 4000Mc/4000Mn (per CPU/node) before Slurm 21.08
    "Timelimit",
    "ElapsedRaw",
    "TotalCPU",  # user+system CPU time of every step, summed on the allocation line
    "MaxRSS",  # on the steps only: the peak resident memory of the step's largest task
    "TRESUsageInAve",  # on the steps: gres/gpuutil=N where the site accounts GPU utilisation
)
"""sacct ``--format`` columns for a finished job's resource use (:func:`sacct_usage_argv`), allocation and steps."""

SACCT_TIME_FORMAT: Final = "SLURM_TIME_FORMAT=%s"
"""Makes sacct print times as Unix seconds: Slurm's default is the cluster's local time without a zone."""

SINFO_FIELDS: Final = ("NodeList", "Partition", "StateLong", "CPUs", "Gres", "GresUsed")
"""sinfo ``--Format`` columns in output order, one line per node and partition."""

DELIMITER: Final = "|"
"""Column delimiter of every format (sacct's ``--parsable2`` one)."""

SACCT_START: Final = "2000-01-01"
"""Far enough back for any job: sacct filters on this window even when given job ids."""


def checked_ids(job_ids: Sequence[str]) -> list[str]:
    """``job_ids`` as a list, each a Slurm job id (``123``, ``123_4``, ``123_[4-9%2]``, ``123+0``) spelled as Slurm
    prints it (:func:`~svc_host.slurm.arrays.is_slurm_id`: ASCII digits, no leading zero); a ``ValueError`` names a bad
    one."""
    if isinstance(job_ids, str):
        msg = f"job_ids must be a sequence of ids, not the string {job_ids!r}"
        raise TypeError(msg)
    ids = list(job_ids)
    if not ids:
        msg = "no job ids given: pass at least one, such as '123' or '123_4'"
        raise ValueError(msg)
    for job_id in ids:
        if not arrays.is_slurm_id(job_id):
            msg = (
                f"invalid Slurm job id {job_id!r}: expected digits 0-9 without a leading zero, such as '123', '123_4' "
                "or '123+0'"
            )
            raise ValueError(msg)
    return ids


def format_fields(fields: Sequence[str], delimiter: str) -> str:
    """The value of squeue/sinfo ``--Format``: ``Field:<width><suffix>``. Width 0 prints the value whole (the
    default cuts it at 20 characters); the suffix is the delimiter, except after the last field."""
    return ",".join(f"{field}:0{delimiter}" for field in fields[:-1]) + f",{fields[-1]}:0"


def program(argv: Sequence[str]) -> str:
    """The program an argv runs, past an ``env NAME=value ...`` prefix: what messages and counters name."""
    words = list(argv)
    if words[:1] == ["env"]:
        words = [word for word in words[1:] if word != "--" and "=" not in word]
    return words[0] if words else ""


def sbatch_argv(*, comment: str | None = None, test_only: bool = False) -> list[str]:
    """Build ``sbatch --parsable``: the job script is written to its stdin; it prints ``<id>[;<cluster>]``.

    ``comment`` (svc's submission tag, see :mod:`svc_host.slurm.tags`) overrides any ``--comment`` of the script.
    ``test_only`` asks Slurm when and where the script would start, without submitting it (``--test-only``: the
    answer is on stderr, see :func:`svc_host.slurm.pending_inputs.parse_test_only`).
    """
    argv = ["sbatch", "--test-only"] if test_only else ["sbatch", "--parsable"]
    return argv if comment is None else [*argv, f"--comment={comment}"]


def squeue_argv(job_ids: Sequence[str] | None = None, *, user: str | None = None) -> list[str]:
    """Build squeue listing one job (or array task) per line with the :data:`SQUEUE_FIELDS` columns.

    With ``job_ids`` every state is asked for, so jobs that ended moments ago and are still in
    slurmctld's memory come back with their final state. ``--all`` includes hidden partitions
    and ``--array`` prints each pending array task on its own line (``123_4``, not ``123_[0-9]``).

    Raises:
        ValueError: ``job_ids`` is empty or holds something that is not a Slurm job id.
    """
    argv = ["squeue", "--noheader", "--all", "--array", f"--Format={format_fields(SQUEUE_FIELDS, DELIMITER)}"]
    if job_ids is not None:
        argv += ["--states=all", f"--jobs={','.join(checked_ids(job_ids))}"]
    if user is not None:
        argv.append(f"--user={user}")
    return argv


def sacct_argv(job_ids: Sequence[str]) -> list[str]:
    """Build sacct printing one line per job allocation in the :data:`SACCT_FIELDS` format.

    The command runs under ``env`` with :data:`SACCT_TIME_FORMAT`, an argv prefix rather than the
    transport's environment, so the times come back as Unix seconds over SSH as well.

    Raises:
        ValueError: ``job_ids`` is empty or holds something that is not a Slurm job id.
    """
    return [
        "env",
        SACCT_TIME_FORMAT,
        "sacct",
        "--parsable2",
        "--noheader",
        "--allocations",
        f"--starttime={SACCT_START}",
        f"--format={','.join(SACCT_FIELDS)}",
        f"--jobs={','.join(checked_ids(job_ids))}",
    ]


def sacct_usage_argv(job_ids: Sequence[str]) -> list[str]:
    """Build sacct printing the :data:`SACCT_USAGE_FIELDS` of each job's allocation and of its steps (no
    ``--allocations``: the memory peak lives on the steps).

    Raises:
        ValueError: ``job_ids`` is empty or holds something that is not a Slurm job id.
    """
    return [
        "sacct",
        "--parsable2",
        "--noheader",
        f"--starttime={SACCT_START}",
        f"--format={','.join(SACCT_USAGE_FIELDS)}",
        f"--jobs={','.join(checked_ids(job_ids))}",
    ]


def scontrol_show_job_argv(job_id: str | None = None) -> list[str]:
    """Build ``scontrol --oneliner show job [id]``: every job (or one) as one ``Key=value`` line.

    Raises:
        ValueError: ``job_id`` is not a Slurm job id.
    """
    argv = ["scontrol", "--oneliner", "show", "job"]
    if job_id is not None:
        argv += checked_ids([job_id])
    return argv


def scontrol_show_node_argv() -> list[str]:
    """Build ``scontrol --oneliner show node``: every node as one ``Key=value`` line."""
    return ["scontrol", "--oneliner", "show", "node"]


def sinfo_argv(partition: str | None = None) -> list[str]:
    """Build sinfo with one line per node and partition with the :data:`SINFO_FIELDS` columns.

    Hidden partitions are left out (they are not offered to users) unless asked for by name.
    """
    argv = ["sinfo", "--Node", "--noheader", f"--Format={format_fields(SINFO_FIELDS, DELIMITER)}"]
    if partition is not None:
        argv.append(f"--partition={partition}")
    return argv


def scontrol_hold_argv(job_ids: Sequence[str], *, release: bool = False) -> list[str]:
    """Build ``scontrol uhold <id>...`` (or ``scontrol release <id>...``): hold pending jobs, or let them start.

    ``uhold`` holds as the job's owner would (reason ``JobHeldUser``) even when run by an administrator, whose
    ``hold`` would be an admin hold. An array's own id holds (releases) every task of it still pending; a
    running job keeps running.

    Raises:
        ValueError: ``job_ids`` is empty or holds something that is not a Slurm job id.
    """
    return ["scontrol", "release" if release else "uhold", *checked_ids(job_ids)]


def scancel_argv(job_ids: Sequence[str]) -> list[str]:
    """Build ``scancel <id>...``.

    Raises:
        ValueError: ``job_ids`` is empty or holds something that is not a Slurm job id.
    """
    return ["scancel", *checked_ids(job_ids)]
