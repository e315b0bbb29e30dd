"""Parsers for the text Slurm commands print, in the formats :mod:`svc_host.slurm.argv` asks for.

Every parser reads the whole stdout of one command and returns domain records. A line that does
not have the expected shape raises :class:`SlurmParseError` naming the command, the line number
and the line: nothing is dropped silently.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.resources import NodeInfo
from svc_host.errors import SlurmParseError
from svc_host.slurm.argv import SACCT_FIELDS, SINFO_FIELDS, SQUEUE_FIELDS
from svc_host.slurm.rows import (
    columns,
    line_error,
    nonblank_lines,
    oneliner_record,
    parsed_field,
    text_or_none,
    whole_number,
)
from svc_host.slurm.states import normalize_state, parse_exit_code
from svc_host.slurm.values import (
    format_job_time_limit,
    gpu_types_in_gres,
    gpu_types_in_tres,
    gpus_in_gres,
    gpus_in_tres,
    parse_duration,
    parse_epoch,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

_SBATCH = re.compile(r"(?P<id>[1-9][0-9]*)(?:;\S+)?")
_NO_TASK: Final = "4294967294"
"""Slurm's NO_VAL as an ``ArrayTaskId``: 24.11's ``scontrol show job`` prints it for an array's own record once no
task is left pending (the tasks that never started), and expands ``%a`` in its output paths with it."""


def parse_sbatch(stdout: str) -> str:
    """Return the job id ``sbatch --parsable`` printed (``123`` or ``123;cluster``).

    Raises:
        SlurmParseError: the output holds no job id.
    """
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    match = _SBATCH.fullmatch(lines[-1]) if lines else None
    if match is None:
        msg = f"sbatch printed no job id: expected '<id>' or '<id>;<cluster>', got {stdout.strip()!r}"
        raise SlurmParseError(msg)
    return match["id"]


def parse_squeue(stdout: str) -> list[JobStatus]:
    """Jobs from :func:`~svc_host.slurm.argv.squeue_argv` output.

    ``gpus`` is the job's total from its TRES (allocated, or requested while pending). squeue
    prints output paths as given (``slurm-%j.out``): a path with a ``%`` pattern is left out
    rather than guessed; ``scontrol show job`` prints them expanded.

    Raises:
        SlurmParseError: a line does not have the format's columns.
    """
    return [_squeue_job(number, line) for number, line in nonblank_lines(stdout)]


class SqueueReader:
    """:func:`parse_squeue` for a queue read again and again: a line printed by the previous answer too (a
    pending job's line does not change from one second to the next) is the same frozen ``JobStatus``, not
    parsed and validated again. Only the last answer's lines are kept."""

    def __init__(self) -> None:
        self._known: dict[str, JobStatus] = {}

    def parse(self, stdout: str) -> list[JobStatus]:
        """Like :func:`parse_squeue`, reusing the jobs of unchanged lines."""
        known: dict[str, JobStatus] = self._known
        seen: dict[str, JobStatus] = {}
        jobs = []
        for number, raw_line in enumerate(stdout.split("\n"), start=1):  # as nonblank_lines does
            job = known.get(raw_line)
            if job is None:
                line = raw_line.removesuffix("\r")
                if not line.strip():
                    continue
                job = _squeue_job(number, line)
            seen[raw_line] = job
            jobs.append(job)
        self._known = seen
        return jobs


def _squeue_job(number: int, line: str) -> JobStatus:
    row = columns("squeue", number, line, SQUEUE_FIELDS)
    return JobStatus(
        job_id=_job_id("squeue", number, line, row["JobArrayID"]),
        state=normalize_state(row["State"]),
        raw_state=row["State"].strip(),
        name=row["Name"],
        user=text_or_none(row["UserName"]),
        partition=text_or_none(row["Partition"]),
        nodes=whole_number("squeue", number, line, row["NumNodes"]),
        gpus=gpus_in_tres(row["tres-alloc"]) if row["tres-alloc"].strip() else None,
        gpu_types=gpu_types_in_tres(row["tres-alloc"]),
        elapsed_seconds=parsed_field("squeue", number, line, parse_duration, row["TimeUsed"]),
        time_limit=parsed_field("squeue", number, line, format_job_time_limit, row["TimeLimit"]),
        reason=text_or_none(row["Reason"]),
        node_list=text_or_none(row["NodeList"]),
        stdout_path=_literal_path(row["STDOUT"]),
        stderr_path=_literal_path(row["STDERR"]),
    )


def parse_sacct(stdout: str) -> list[JobStatus]:
    """Job allocations from :func:`~svc_host.slurm.argv.sacct_argv` output.

    Steps (``123.batch``, ``123.extern``, ``123.0``) are skipped. When one id appears twice
    (slurmctld restarted without its state and reused ids) the most recently submitted job wins.
    ``started_at``/``ended_at`` are the Start and End accounting knows (UTC), ``None`` while ``Unknown``.

    Raises:
        SlurmParseError: a line does not have the format's columns.
    """
    latest: dict[str, tuple[datetime | None, JobStatus]] = {}
    for number, line in nonblank_lines(stdout):
        row = columns("sacct", number, line, SACCT_FIELDS)
        job_id = _job_id("sacct", number, line, row["JobID"])
        if "." in job_id:
            continue
        tres = row["AllocTRES"] or row["ReqTRES"]
        state = normalize_state(row["State"])
        exit_code, signal = _final(state, parsed_field("sacct", number, line, parse_exit_code, row["ExitCode"]))
        job = JobStatus(
            job_id=job_id,
            state=state,
            raw_state=row["State"].strip(),
            name=row["JobName"],
            user=text_or_none(row["User"]),
            partition=text_or_none(row["Partition"]),
            nodes=whole_number("sacct", number, line, row["NNodes"]),
            gpus=gpus_in_tres(tres) if tres else None,
            gpu_types=gpu_types_in_tres(tres),
            elapsed_seconds=whole_number("sacct", number, line, row["ElapsedRaw"]),
            time_limit=parsed_field("sacct", number, line, format_job_time_limit, row["Timelimit"]),
            exit_code=exit_code,
            signal=signal,
            reason=text_or_none(row["Reason"]),
            node_list=text_or_none(row["NodeList"]),
            started_at=parsed_field("sacct", number, line, parse_epoch, row["Start"]),
            ended_at=parsed_field("sacct", number, line, parse_epoch, row["End"]),
        )
        submitted = parsed_field("sacct", number, line, parse_epoch, row["Submit"])
        if job_id not in latest or _never(latest[job_id][0]) <= _never(submitted):
            latest[job_id] = (submitted, job)
    return [job for _, job in latest.values()]


def parse_scontrol_jobs(stdout: str) -> list[JobStatus]:
    """Jobs from ``scontrol --oneliner show job`` output (``No jobs in the system`` is none).

    Array tasks get the ``123_4`` id squeue and sacct use; GPUs come from the job's TRES, else
    from ``TresPerNode`` times nodes.

    Raises:
        SlurmParseError: a line is not a job record.
    """
    jobs = []
    for number, line in nonblank_lines(stdout):
        if line.strip() == "No jobs in the system":
            continue
        fields = oneliner_record("scontrol show job", number, line, "JobId")
        nodes = parsed_field("scontrol show job", number, line, _node_count, fields.get("NumNodes", ""))
        raw_state = fields.get("JobState", "")
        state = normalize_state(raw_state)
        exit_code, signal = _final(
            state, parsed_field("scontrol show job", number, line, parse_exit_code, fields.get("ExitCode", ""))
        )
        tres = fields.get("AllocTRES") or fields.get("TRES") or fields.get("ReqTRES") or ""
        gpus = gpus_in_tres(tres) or gpus_in_gres(fields.get("TresPerNode", "")) * (nodes or 1)
        per_node = gpu_types_in_gres(fields.get("TresPerNode", ""))
        jobs.append(
            JobStatus(
                job_id=_scontrol_job_id(fields),
                state=state,
                raw_state=raw_state,
                name=fields.get("JobName"),
                user=text_or_none(fields.get("UserId", "").split("(")[0]),
                partition=text_or_none(fields.get("Partition", "")),
                nodes=nodes,
                gpus=gpus,
                gpu_types=gpu_types_in_tres(tres) or tuple((kind, count * (nodes or 1)) for kind, count in per_node),
                elapsed_seconds=parsed_field(
                    "scontrol show job", number, line, parse_duration, fields.get("RunTime", "")
                ),
                time_limit=parsed_field(
                    "scontrol show job", number, line, format_job_time_limit, fields.get("TimeLimit", "")
                ),
                exit_code=exit_code,
                signal=signal,
                # scontrol writes the spaces of a reason as "_" ("ReqNodeNotAvail,_UnavailableNodes:x").
                reason=text_or_none(fields.get("Reason", "").replace("_", " ")),
                node_list=text_or_none(fields.get("NodeList", "")),
                stdout_path=_scontrol_path(fields, "StdOut"),
                stderr_path=_scontrol_path(fields, "StdErr"),
            )
        )
    return jobs


def parse_sinfo(stdout: str) -> list[NodeInfo]:
    """Nodes from :func:`~svc_host.slurm.argv.sinfo_argv` output, one per node and partition.

    The ``*`` sinfo appends to the default partition is removed.

    Raises:
        SlurmParseError: a line does not have the format's columns.
    """
    nodes = []
    for number, line in nonblank_lines(stdout):
        row = columns("sinfo", number, line, SINFO_FIELDS)
        row = {key: value.strip() for key, value in row.items()}
        if not row["NodeList"] or not row["Partition"]:
            raise line_error("sinfo", number, line, "node or partition name is empty")
        nodes.append(
            NodeInfo(
                name=row["NodeList"],
                partition=row["Partition"].rstrip("*"),
                raw_state=row["StateLong"],
                cpus=whole_number("sinfo", number, line, row["CPUs"]) or 0,
                gpus_total=gpus_in_gres(row["Gres"]),
                gpus_used=gpus_in_gres(row["GresUsed"]),
                gpu_types=dict(gpu_types_in_gres(row["Gres"])),
                gpu_types_used=dict(gpu_types_in_gres(row["GresUsed"])),
            )
        )
    return nodes


def parse_scontrol_nodes(stdout: str) -> list[NodeInfo]:
    """Nodes from ``scontrol --oneliner show node`` output, one per node and partition it is in.

    GPUs in use come from ``GresUsed`` when printed, else from the node's ``AllocTRES``. Nodes in
    no partition are left out: no partition offers them.

    Raises:
        SlurmParseError: a line is not a node record.
    """
    nodes: list[NodeInfo] = []
    for number, line in nonblank_lines(stdout):
        if line.strip() == "No nodes in the system":
            continue
        fields = oneliner_record("scontrol show node", number, line, "NodeName")
        used = fields.get("GresUsed")
        alloc = fields.get("AllocTRES", "")
        gpus_used = gpus_in_gres(used) if used is not None else gpus_in_tres(alloc)
        types_used = gpu_types_in_gres(used) if used is not None else gpu_types_in_tres(alloc)
        cpus = whole_number("scontrol show node", number, line, fields.get("CPUTot", "")) or 0
        nodes.extend(
            NodeInfo(
                name=fields["NodeName"],
                partition=partition,
                raw_state=fields.get("State", ""),
                cpus=cpus,
                gpus_total=gpus_in_gres(fields.get("Gres", "")),
                gpus_used=gpus_used,
                gpu_types=dict(gpu_types_in_gres(fields.get("Gres", ""))),
                gpu_types_used=dict(types_used),
            )
            for partition in fields.get("Partitions", "").split(",")
            if partition
        )
    return nodes


def _job_id(command: str, number: int, line: str, value: str) -> str:
    job_id = value.strip()
    if not job_id or not job_id[0].isdigit():
        raise line_error(command, number, line, f"job id {job_id!r} is not a Slurm job id")
    return job_id


def _scontrol_job_id(fields: Mapping[str, str]) -> str:
    array_job, task = fields.get("ArrayJobId"), fields.get("ArrayTaskId")
    if array_job and task == _NO_TASK:
        return array_job  # as sacct names the tasks that never started: the array's own id
    if array_job and task:
        return f"{array_job}_{task}" if task.isascii() and task.isdigit() else f"{array_job}_[{task}]"
    het_job, offset = fields.get("HetJobId"), fields.get("HetJobOffset")
    if het_job and offset:
        return f"{het_job}+{offset}"
    return fields["JobId"]


def _scontrol_path(fields: Mapping[str, str], key: str) -> str | None:
    """An output path as scontrol expanded it; none for a record of several tasks whose ``%a`` became NO_VAL
    (``arr_29_4294967294.out``: no task writes that file)."""
    path = text_or_none(fields.get(key, ""))
    task = fields.get("ArrayTaskId", "")
    several = bool(task) and (task == _NO_TASK or not task.isdigit())
    return None if several and path is not None and _NO_TASK in path else path


def _final(state: JobState, exit_status: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    # Slurm prints 0:0 for jobs that have not ended; that is no exit code yet.
    return exit_status if state.is_terminal else (None, None)


def _never(moment: datetime | None) -> datetime:
    return moment or datetime.min.replace(tzinfo=UTC)


def _literal_path(value: str) -> str | None:
    path = text_or_none(value)
    return None if path is None or "%" in path else path


def _node_count(text: str) -> int | None:
    # Pending jobs may show a range ("2-2", "1-4"): the minimum is what they asked for.
    first = text.strip().split("-")[0]
    if not first:
        return None
    if not first.isdigit():
        msg = f"node count {text!r} is not a number"
        raise SlurmParseError(msg)
    return int(first)
