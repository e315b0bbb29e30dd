"""Parsers for the text Slurm commands print, in the formats :mod:`svc_host.slurm.argv` asks for.

Every parser reads the whole stdout of one command and returns domain records. A line that does
not have the expected shape raises :class:`SlurmParseError` naming the command, the line number
and the line: nothing is dropped silently.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, TypeVar

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.resources import NodeInfo
from svc_host.errors import SlurmParseError
from svc_host.slurm.argv import DELIMITER, SACCT_FIELDS, SINFO_FIELDS, SQUEUE_FIELDS
from svc_host.slurm.scontrol import split_oneliner
from svc_host.slurm.states import normalize_state, parse_exit_code

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

_NO_VALUE: Final = frozenset({"", "N/A", "(NULL)", "NONE", "NONE ASSIGNED", "UNKNOWN"})
_NO_TIME: Final = frozenset({"", "UNKNOWN", "NONE", "N/A"})
_NO_DURATION: Final = frozenset({"", "N/A", "INVALID", "NOT_SET", "NONE", "PARTITION_LIMIT"})
_UNLIMITED: Final = frozenset({"UNLIMITED", "INFINITE"})
_DURATION = re.compile(r"(?:(?P<days>\d+)-)?(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?(?:\.\d+)?")
_SBATCH = re.compile(r"(?P<id>\d+)(?:;\S+)?")
_PARENS = re.compile(r"\([^)]*\)")
_NO_TASK: Final = "4294967294"
"""Slurm's NO_VAL as an ``ArrayTaskId``: 24.11's ``scontrol show job`` prints it for an array's own record once no
task is left pending (the tasks that never started), and expands ``%a`` in its output paths with it."""

_T = TypeVar("_T")


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def parse_duration(text: str) -> int | None:
    """Seconds in one of Slurm's time forms; ``None`` when Slurm says there is no such time.

    ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS`` (also the input forms ``M``, ``D-HH``, ``D-HH:MM``).
    ``UNLIMITED``, ``INVALID``, ``N/A``, ``Partition_Limit`` and empty text are ``None``.

    Raises:
        SlurmParseError: the text is none of those.
    """
    text = text.strip()
    if text.upper() in _NO_DURATION | _UNLIMITED:
        return None
    match = _DURATION.fullmatch(text)
    if match is None:
        msg = f"unexpected duration {text!r}: expected a Slurm time such as '1-02:03:04' or 'UNLIMITED'"
        raise SlurmParseError(msg)
    parts = [int(match[key]) for key in ("a", "b", "c") if match[key] is not None]
    if match["days"] is not None:  # D-H, D-H:M, D-H:M:S
        hours, minutes, seconds = [*parts, 0, 0][:3]
        return ((int(match["days"]) * 24 + hours) * 60 + minutes) * 60 + seconds
    if len(parts) == 3:  # H:M:S
        return (parts[0] * 60 + parts[1]) * 60 + parts[2]
    minutes, seconds = [*parts, 0][:2]  # M, M:S
    return minutes * 60 + seconds


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def parse_epoch(text: str) -> datetime | None:
    """A time sacct printed under ``SLURM_TIME_FORMAT=%s`` (Unix seconds) as an aware UTC datetime.

    ``Unknown`` (not started or not ended yet), ``None`` and empty text are ``None``.

    Raises:
        SlurmParseError: the text is none of those.
    """
    text = text.strip()
    if text.upper() in _NO_TIME:
        return None
    if not text.isdigit():
        msg = f"unexpected time {text!r}: expected Unix seconds (sacct under SLURM_TIME_FORMAT=%s) or 'Unknown'"
        raise SlurmParseError(msg)
    return datetime.fromtimestamp(int(text), UTC)


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def format_time_limit(text: str) -> str | None:
    """Spell a time limit as ``[D-]HH:MM:SS`` or ``UNLIMITED``, whichever command printed it; ``None`` if unset."""
    if text.strip().upper() in _UNLIMITED:
        return "UNLIMITED"
    seconds = parse_duration(text)
    return None if seconds is None else spell_time_limit(seconds)


def spell_time_limit(seconds: int) -> str:
    """Seconds as Slurm spells a time limit: ``[D-]HH:MM:SS`` (``90061`` is ``1-01:01:01``)."""
    days, rest = divmod(seconds, 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def gpus_in_gres(text: str) -> int:
    """GPUs in a GRES string: ``gpu:4``, ``gpu:tesla:4(S:0)``, ``gres/gpu:2``, ``gres:gpu``.

    Non-GPU resources (``mps:100``) and ``(null)``/``N/A`` count 0; a ``gpu`` without count is 1.
    """
    total = 0
    for raw_item in _PARENS.sub("", text).split(","):
        item = raw_item.strip().removeprefix("gres:").removeprefix("gres/")
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        total += int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
    return total


@functools.lru_cache(maxsize=4096)
def gpu_types_in_gres(text: str) -> tuple[tuple[str, int], ...]:
    """GPUs per type in a node's GRES (``Gres``/``GresUsed``), in the order Slurm lists them.

    ``gpu:a100:2(S:0),gpu:v100:2`` -> ``(("a100", 2), ("v100", 2))``; MIG-style names are types like any other
    (``gpu:a100_3g.20gb:7``); ``(IDX:0-1)`` and socket hints are dropped; an untyped ``gpu:4`` (or 22.05's
    ``gpu:(null):4``) has the type ``""``. A type listed twice is summed.
    """
    found: dict[str, int] = {}
    for raw_item in _PARENS.sub("", text).split(","):
        parts = raw_item.strip().removeprefix("gres:").removeprefix("gres/").split(":")
        if parts[0] != "gpu":
            continue
        count = int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
        kind = parts[1] if len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()) else ""
        found[kind] = found.get(kind, 0) + count
    return tuple(found.items())


@functools.lru_cache(maxsize=4096)
def gpu_types_in_tres(text: str) -> tuple[tuple[str, int], ...]:
    """GPUs per type in a TRES string (``gres/gpu=3,gres/gpu:a100=2,gres/gpu:v100=1`` -> a100 2, v100 1); GPUs
    the typed entries do not account for (an untyped request) have the type ``""``."""
    total = gpus_in_tres(text)
    found: dict[str, int] = {}
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        if key.startswith("gres/gpu:") and value.isdigit():
            found[key.removeprefix("gres/gpu:")] = found.get(key.removeprefix("gres/gpu:"), 0) + int(value)
    rest = total - sum(found.values())
    return tuple(found.items()) + ((("", rest),) if rest > 0 else ())


@functools.lru_cache(maxsize=4096)  # pure; a queue repeats the same few values
def gpus_in_tres(text: str) -> int:
    """GPUs in a TRES string such as ``cpu=2,mem=1G,node=1,gres/gpu=4,gres/gpu:tesla=4``.

    Slurm lists typed GPUs next to the untyped total; the total wins so they are not counted twice.
    """
    untyped = typed = 0
    seen_untyped = False
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        if not value.isdigit():
            continue
        if key == "gres/gpu":
            untyped += int(value)
            seen_untyped = True
        elif key.startswith("gres/gpu:"):
            typed += int(value)
    return untyped if seen_untyped else typed


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
    return [_squeue_job(number, line) for number, line in _lines(stdout)]


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
        for number, raw_line in enumerate(stdout.split("\n"), start=1):  # as _lines does
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
    row = _columns("squeue", number, line, SQUEUE_FIELDS)
    return JobStatus(
        job_id=_job_id("squeue", number, line, row["JobArrayID"]),
        state=normalize_state(row["State"]),
        raw_state=row["State"].strip(),
        name=row["Name"],
        user=_text(row["UserName"]),
        partition=_text(row["Partition"]),
        nodes=_int("squeue", number, line, row["NumNodes"]),
        gpus=gpus_in_tres(row["tres-alloc"]) if row["tres-alloc"].strip() else None,
        elapsed_seconds=_field("squeue", number, line, parse_duration, row["TimeUsed"]),
        time_limit=_field("squeue", number, line, format_time_limit, row["TimeLimit"]),
        reason=_text(row["Reason"]),
        node_list=_text(row["NodeList"]),
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
    for number, line in _lines(stdout):
        row = _columns("sacct", number, line, SACCT_FIELDS)
        job_id = _job_id("sacct", number, line, row["JobID"])
        if "." in job_id:
            continue
        tres = row["AllocTRES"] or row["ReqTRES"]
        state = normalize_state(row["State"])
        exit_code, signal = _final(state, _field("sacct", number, line, parse_exit_code, row["ExitCode"]))
        job = JobStatus(
            job_id=job_id,
            state=state,
            raw_state=row["State"].strip(),
            name=row["JobName"],
            user=_text(row["User"]),
            partition=_text(row["Partition"]),
            nodes=_int("sacct", number, line, row["NNodes"]),
            gpus=gpus_in_tres(tres) if tres else None,
            elapsed_seconds=_int("sacct", number, line, row["ElapsedRaw"]),
            time_limit=_field("sacct", number, line, format_time_limit, row["Timelimit"]),
            exit_code=exit_code,
            signal=signal,
            reason=_text(row["Reason"]),
            node_list=_text(row["NodeList"]),
            started_at=_field("sacct", number, line, parse_epoch, row["Start"]),
            ended_at=_field("sacct", number, line, parse_epoch, row["End"]),
        )
        submitted = _field("sacct", number, line, parse_epoch, row["Submit"])
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
    for number, line in _lines(stdout):
        if line.strip() == "No jobs in the system":
            continue
        fields = _record("scontrol show job", number, line, "JobId")
        nodes = _field("scontrol show job", number, line, _node_count, fields.get("NumNodes", ""))
        raw_state = fields.get("JobState", "")
        state = normalize_state(raw_state)
        exit_code, signal = _final(
            state, _field("scontrol show job", number, line, parse_exit_code, fields.get("ExitCode", ""))
        )
        tres = fields.get("AllocTRES") or fields.get("TRES") or fields.get("ReqTRES") or ""
        gpus = gpus_in_tres(tres) or gpus_in_gres(fields.get("TresPerNode", "")) * (nodes or 1)
        jobs.append(
            JobStatus(
                job_id=_scontrol_job_id(fields),
                state=state,
                raw_state=raw_state,
                name=fields.get("JobName"),
                user=_text(fields.get("UserId", "").split("(")[0]),
                partition=_text(fields.get("Partition", "")),
                nodes=nodes,
                gpus=gpus,
                elapsed_seconds=_field("scontrol show job", number, line, parse_duration, fields.get("RunTime", "")),
                time_limit=_field("scontrol show job", number, line, format_time_limit, fields.get("TimeLimit", "")),
                exit_code=exit_code,
                signal=signal,
                # scontrol writes the spaces of a reason as "_" ("ReqNodeNotAvail,_UnavailableNodes:x").
                reason=_text(fields.get("Reason", "").replace("_", " ")),
                node_list=_text(fields.get("NodeList", "")),
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
    for number, line in _lines(stdout):
        row = _columns("sinfo", number, line, SINFO_FIELDS)
        row = {key: value.strip() for key, value in row.items()}
        if not row["NodeList"] or not row["Partition"]:
            raise _line_error("sinfo", number, line, "node or partition name is empty")
        nodes.append(
            NodeInfo(
                name=row["NodeList"],
                partition=row["Partition"].rstrip("*"),
                raw_state=row["StateLong"],
                cpus=_int("sinfo", number, line, row["CPUs"]) or 0,
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
    for number, line in _lines(stdout):
        if line.strip() == "No nodes in the system":
            continue
        fields = _record("scontrol show node", number, line, "NodeName")
        used = fields.get("GresUsed")
        alloc = fields.get("AllocTRES", "")
        gpus_used = gpus_in_gres(used) if used is not None else gpus_in_tres(alloc)
        types_used = gpu_types_in_gres(used) if used is not None else gpu_types_in_tres(alloc)
        cpus = _int("scontrol show node", number, line, fields.get("CPUTot", "")) or 0
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


def _lines(stdout: str) -> Iterator[tuple[int, str]]:
    # Not str.splitlines: it also breaks on U+2028, U+0085 and friends, which job names may hold.
    for number, raw_line in enumerate(stdout.split("\n"), start=1):
        line = raw_line.removesuffix("\r")
        if line.strip():
            yield number, line


def delimited_rows(command: str, stdout: str, names: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, {name: value})`` of each non-blank line of ``--parsable2``-style output (``squeue``
    ``--Format`` with :data:`DELIMITER`, ``sacctmgr -P``); a line with too few columns is a
    :class:`SlurmParseError` naming ``command`` and the line, and the last column keeps any further ``|``."""
    for number, line in _lines(stdout):
        yield number, _columns(command, number, line, names)


def _line_error(command: str, number: int, line: str, problem: str) -> SlurmParseError:
    return SlurmParseError(f"unexpected {command} output on line {number} ({problem}): {line!r}")


def _columns(command: str, number: int, line: str, names: Sequence[str]) -> dict[str, str]:
    values = line.split(DELIMITER, maxsplit=len(names) - 1)
    if len(values) != len(names):
        problem = f"expected {len(names)} {DELIMITER!r}-separated columns, got {len(values)}"
        raise _line_error(command, number, line, problem)
    return dict(zip(names, values, strict=True))


def _record(command: str, number: int, line: str, first_key: str) -> Mapping[str, str]:
    fields = split_oneliner(line)
    if not fields.get(first_key):
        raise _line_error(command, number, line, f"no {first_key}=")
    return fields


def _job_id(command: str, number: int, line: str, value: str) -> str:
    job_id = value.strip()
    if not job_id or not job_id[0].isdigit():
        raise _line_error(command, number, line, f"job id {job_id!r} is not a Slurm job id")
    return job_id


def _scontrol_job_id(fields: Mapping[str, str]) -> str:
    array_job, task = fields.get("ArrayJobId"), fields.get("ArrayTaskId")
    if array_job and task == _NO_TASK:
        return array_job  # as sacct names the tasks that never started: the array's own id
    if array_job and task:
        return f"{array_job}_{task}" if task.isdigit() else f"{array_job}_[{task}]"
    het_job, offset = fields.get("HetJobId"), fields.get("HetJobOffset")
    if het_job and offset:
        return f"{het_job}+{offset}"
    return fields["JobId"]


def _scontrol_path(fields: Mapping[str, str], key: str) -> str | None:
    """An output path as scontrol expanded it; none for a record of several tasks whose ``%a`` became NO_VAL
    (``arr_29_4294967294.out``: no task writes that file)."""
    path = _text(fields.get(key, ""))
    task = fields.get("ArrayTaskId", "")
    several = bool(task) and (task == _NO_TASK or not task.isdigit())
    return None if several and path is not None and _NO_TASK in path else path


def _final(state: JobState, exit_status: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    # Slurm prints 0:0 for jobs that have not ended; that is no exit code yet.
    return exit_status if state.is_terminal else (None, None)


def _never(moment: datetime | None) -> datetime:
    return moment or datetime.min.replace(tzinfo=UTC)


def _literal_path(value: str) -> str | None:
    path = _text(value)
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


def _text(value: str) -> str | None:
    value = value.strip()
    return None if value.upper() in _NO_VALUE else value


def _int(command: str, number: int, line: str, value: str) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not value.isdigit():
        raise _line_error(command, number, line, f"{value!r} is not a whole number")
    return int(value)


def _field(command: str, number: int, line: str, parse: Callable[[str], _T], value: str) -> _T:
    try:
        return parse(value)
    except SlurmParseError as error:
        raise _line_error(command, number, line, str(error)) from None
