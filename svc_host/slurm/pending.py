"""Why a job is pending, in a plain sentence that names the limit and the value that binds.

Slurm gives a pending job one reason word (``squeue``'s NODELIST(REASON), ``scontrol``'s ``Reason=``). Most
words point at a limit set somewhere else: ``QOSMaxGRESPerUser`` is the ``MaxTRESPerUser`` of the job's QOS,
``AssocGrpGRES`` the ``GrpTRES`` of its association, ``PartitionTimeLimit`` the partition's ``MaxTime``. The
functions here join the word with those values (read by :mod:`svc_host.slurm.pending_inputs`) and say what
the user can do. A reason they do not know gets an honest generic sentence, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from svc_host.domain.resources import NodeInfo
from svc_host.errors import SlurmParseError
from svc_host.slurm.parse import format_time_limit, parse_duration
from svc_host.slurm.pending_inputs import Limits, LiveJob, tres_map


@dataclass(frozen=True)
class PendingJob:
    """The fields of ``scontrol show job`` an explanation reads."""

    job_id: str
    state: str
    reason: str
    user: str
    account: str
    qos: str
    partition: str
    time_limit: str
    nodes: str
    tres: dict[str, str]
    dependency: str
    eligible_time: str

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> PendingJob:
        """From one ``scontrol --oneliner show job`` record (:func:`svc_host.slurm.scontrol.split_oneliner`)."""
        task = fields.get("ArrayTaskId", "")
        job_id = fields.get("JobId", "")
        if task and task.isdigit():
            job_id = f"{fields.get('ArrayJobId', job_id)}_{task}"
        return cls(
            job_id=job_id,
            state=fields.get("JobState", ""),
            # scontrol writes a reason's spaces as "_" ("ReqNodeNotAvail,_UnavailableNodes:x").
            reason=fields.get("Reason", "None").replace("_", " "),
            user=fields.get("UserId", "").split("(")[0],
            account=fields.get("Account", ""),
            qos=fields.get("QOS", ""),
            partition=fields.get("Partition", ""),
            time_limit=fields.get("TimeLimit", ""),
            nodes=fields.get("NumNodes", "1").split("-")[0],
            tres=tres_map(fields.get("ReqTRES") or fields.get("TRES", "")),
            dependency=fields.get("Dependency", "(null)"),
            eligible_time=fields.get("EligibleTime", ""),
        )


@dataclass(frozen=True)
class Binding:
    """The limit a job waits on: where it is set, its column, the value that binds and what is in use."""

    scope: str
    """``qos``, ``association``, ``partition`` or ``nodes``."""
    name: str
    field: str
    value: str
    used: str | None = None


@dataclass(frozen=True)
class Explanation:
    """A pending job's reason as Slurm says it, as a sentence, and the limit behind it when there is one.

    ``needs_action``: the job will not start without a change (a hold, a dependency that can never be met, a
    request above a per-job limit, nodes that are down)."""

    reason: str
    sentence: str
    binding: Binding | None = None
    needs_action: bool = False


@dataclass(frozen=True)
class Context:
    """Everything around a job an explanation may name."""

    qos: Limits | None = None
    associations: dict[tuple[str, str], Limits] | None = None
    partition: dict[str, str] | None = None
    nodes: tuple[NodeInfo, ...] = ()
    live: tuple[LiveJob, ...] = ()


_UNIT: Final = {
    "gres/gpu": ("GPU", "GPUs"),
    "cpu": ("CPU", "CPUs"),
    "node": ("node", "nodes"),
    "billing": ("billing unit", "billing units"),
}

# What the middle of a QOS*/Assoc* reason means: the TRES it counts (None for job counts and wall time).
_RESOURCE: Final = (
    (re.compile(r"GRES"), "gres/"),
    (re.compile(r"Cpu"), "cpu"),
    (re.compile(r"Node"), "node"),
    (re.compile(r"Mem"), "mem"),
    (re.compile(r"Billing"), "billing"),
    (re.compile(r"Energy"), "energy"),
    (re.compile(r"License|Lic"), "license/"),
)
_LIMIT_REASON = re.compile(r"^(?P<kind>QOS|Assoc)(?P<group>Grp|Max)(?P<rest>\w+)$")


def explain(job: PendingJob, context: Context) -> Explanation:
    """The plain sentence for ``job``'s pending reason, naming the binding limit where Slurm has one."""
    reason = job.reason.strip() or "None"
    word = reason.split(",")[0].split(" ")[0]
    if reason.startswith(("ReqNodeNotAvail", "Nodes required for job are DOWN")):
        return _nodes_unavailable(job, reason, context)
    simple = _SIMPLE.get(word)
    if simple is not None:
        return simple(job, reason, context)
    match = _LIMIT_REASON.match(word)
    if match is not None:
        return _limit(job, reason, match, context)
    return Explanation(
        reason=reason,
        sentence=(
            f"Slurm gives the reason '{reason}' for job {job.job_id}; svc has no plainer explanation of it "
            "(see 'man squeue', JOB REASON CODES)."
        ),
    )


def _count(number: int | str, unit: str) -> str:
    singular, plural = _UNIT.get(unit, (unit, unit))
    return f"{number} {singular if str(number) == '1' else plural}"


def _tres_word(tres: str) -> str:
    if tres.startswith("gres/gpu"):
        return "GPUs"
    if tres == "mem":
        return "memory"
    return _UNIT.get(tres, (tres, tres))[1]


def _amount(tres: str, value: int | str) -> str:
    if tres == "mem":
        return f"{value}M of memory" if str(value).isdigit() else f"{value} of memory"
    return _count(value, "gres/gpu" if tres.startswith("gres/gpu") else tres)


def _mem_mb(text: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTP]?)", text.strip())
    if match is None:
        return 0
    scale = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024**2, "P": 1024**3}[match[2]]
    return round(float(match[1]) * scale)


def _number(tres: str, text: str) -> int:
    return _mem_mb(text) if tres == "mem" else int(text) if text.isdigit() else 0


def _held(job: PendingJob, reason: str, _: Context) -> Explanation:
    if reason.startswith("JobHeldAdmin"):
        sentence = f"Job {job.job_id} is held by an administrator: only an administrator can release it."
    else:
        sentence = (
            f"Job {job.job_id} is held (JobHeldUser): it will not start until it is released "
            f"(scontrol release {job.job_id})."
        )
    return Explanation(reason=reason, sentence=sentence, needs_action=True)


def _priority(job: PendingJob, reason: str, context: Context) -> Explanation:
    mine = next((live for live in context.live if live.job_id == job.job_id), None)
    ahead = [
        live
        for live in context.live
        if live.state == "PENDING"
        and live.partition == job.partition
        and mine is not None
        and live.priority > mine.priority
    ]
    detail = (
        f": {len(ahead)} pending job{'s' * (len(ahead) != 1)} in partition '{job.partition}' rank above it"
        if mine
        else ""
    )
    return Explanation(
        reason=reason,
        sentence=f"Waiting for jobs with a higher priority to start first{detail}.",
        binding=Binding(
            scope="partition", name=job.partition, field="Priority", value=str(mine.priority), used=str(len(ahead))
        )
        if mine
        else None,
    )


def _resources(job: PendingJob, reason: str, context: Context) -> Explanation:
    asked = [f"{_amount(tres, value)}" for tres, value in job.tres.items() if tres in {"gres/gpu", "cpu", "mem"}]
    nodes = [node for node in context.nodes if node.partition == job.partition and not node.is_down]
    free_gpus = sum(max(0, node.gpus_total - node.gpus_used) for node in nodes)
    total_gpus = sum(node.gpus_total for node in nodes)
    parts = [f"it asks for {', '.join(asked)} on {_count(job.nodes, 'node')}"] if asked else []
    binding = None
    if total_gpus and "gres/gpu" in job.tres:
        parts.append(f"partition '{job.partition}' has {free_gpus} of {_count(total_gpus, 'gres/gpu')} free now")
        binding = Binding(
            scope="partition",
            name=job.partition,
            field="gres/gpu",
            value=str(total_gpus),
            used=str(total_gpus - free_gpus),
        )
    detail = f": {'; '.join(parts)}" if parts else ""
    return Explanation(
        reason=reason, sentence=f"Waiting for free resources in partition '{job.partition}'{detail}.", binding=binding
    )


def _nodes_unavailable(job: PendingJob, reason: str, context: Context) -> Explanation:
    named = re.search(r"UnavailableNodes:(\S+)", reason)
    down = [node for node in context.nodes if node.partition == job.partition and node.is_down]
    unavailable = named[1] if named else ",".join(f"{node.name} ({node.raw_state})" for node in down)
    usable = len({node.name for node in context.nodes if node.partition == job.partition and not node.is_down})
    sentence = f"Nodes job {job.job_id} needs are unavailable"
    sentence += f": {unavailable}" if unavailable else " (down, drained or reserved)"
    if context.nodes and job.nodes.isdigit() and int(job.nodes) > usable:
        sentence += (
            f". It asks for {_count(job.nodes, 'node')} and partition '{job.partition}' has {usable} up: "
            "it starts only when enough nodes come back, or ask for fewer nodes"
        )
    return Explanation(
        reason=reason,
        sentence=sentence + ".",
        binding=Binding(scope="nodes", name=job.partition, field="NumNodes", value=job.nodes, used=str(usable))
        if context.nodes
        else None,
        needs_action=bool(context.nodes) and job.nodes.isdigit() and int(job.nodes) > usable,
    )


def _dependency(job: PendingJob, reason: str, _: Context) -> Explanation:
    waits = job.dependency if job.dependency not in {"", "(null)"} else "other jobs"
    return Explanation(reason=reason, sentence=f"Waiting for its dependency to be met: {waits}.")


def _never(job: PendingJob, reason: str, _: Context) -> Explanation:
    failed = re.findall(r"(\w+):(\d+(?:_\d+)?)\(failed\)", job.dependency)
    what = ", ".join(f"{kind} on job {other}" for kind, other in failed) or job.dependency
    return Explanation(
        reason=reason,
        sentence=(
            f"Job {job.job_id} will never start: its dependency ({what}) can no longer be met, since that job did "
            f"not end as required. Cancel it (svc cancel {job.job_id}) and submit it again without the dependency."
        ),
        binding=Binding(scope="dependency", name=job.job_id, field="Dependency", value=job.dependency),
        needs_action=True,
    )


def _time_limit(job: PendingJob, reason: str, context: Context) -> Explanation:
    max_time = (context.partition or {}).get("MaxTime", "")
    asked = format_time_limit(job.time_limit) or job.time_limit
    allowed = format_time_limit(max_time) if max_time else None
    limit = f" (MaxTime {allowed})" if allowed else ""
    return Explanation(
        reason=reason,
        sentence=(
            f"Job {job.job_id} asks for {asked}, more than partition '{job.partition}' allows{limit}: it will not "
            f"start there; cancel it and ask for {f'at most {allowed}' if allowed else 'less time'}, or choose "
            "another partition."
        ),
        binding=Binding(scope="partition", name=job.partition, field="MaxTime", value=allowed or "", used=asked),
        needs_action=True,
    )


def _begin(job: PendingJob, reason: str, _: Context) -> Explanation:
    when = job.eligible_time if job.eligible_time not in {"", "Unknown"} else "its begin time"
    return Explanation(reason=reason, sentence=f"Job {job.job_id} may not start before {when} (--begin).")


def _none(job: PendingJob, reason: str, _: Context) -> Explanation:
    return Explanation(
        reason=reason, sentence=f"Job {job.job_id} was just submitted: the scheduler has not looked at it yet."
    )


_SIMPLE: Final = {
    "JobHeldUser": _held,
    "JobHeldAdmin": _held,
    "Priority": _priority,
    "Resources": _resources,
    "Dependency": _dependency,
    "DependencyNeverSatisfied": _never,
    "PartitionTimeLimit": _time_limit,
    "BeginTime": _begin,
    "None": _none,
}


def _column(kind: str, group: str, rest: str) -> tuple[str, str]:
    """(column, scope words) of the limit behind a reason such as QOSMaxGRESPerUser or AssocGrpJobsLimit."""
    per = "user" if "PerUser" in rest else "account" if "PerAccount" in rest else "job" if "PerJob" in rest else ""
    if ("Jobs" in rest or "Submit" in rest) and not per:
        per = "user"  # a QOS's MaxJobs/MaxSubmit are per user; an association is one user in one account
    if "Wall" in rest:
        return "MaxWall", "per job"
    if "Submit" in rest:
        column = {"user": "MaxSubmitPU", "account": "MaxSubmitPA"}.get(
            per, "GrpSubmit" if group == "Grp" else "MaxSubmit"
        )
    elif "Jobs" in rest:
        column = {"user": "MaxJobsPU", "account": "MaxJobsPA"}.get(per, "GrpJobs" if group == "Grp" else "MaxJobs")
    elif "RunMin" in rest:
        column = "GrpTRESRunMins"
    elif group == "Grp":
        column = "GrpTRES"
    else:
        column = {"user": "MaxTRESPU", "account": "MaxTRESPA"}.get(per, "MaxTRES")
    if kind == "Assoc" and column.endswith(("PU", "PA")):
        column = column[:-2]
    if group == "Grp":
        return column, "for all its jobs together"
    return column, {"user": "per user", "account": "per account"}.get(per, "per job")


_COLUMN_NAME: Final = {
    "MaxTRESPU": "MaxTRESPerUser",
    "MaxJobsPU": "MaxJobsPerUser",
    "MaxSubmitPU": "MaxSubmitJobsPerUser",
    "MaxTRESPA": "MaxTRESPerAccount",
    "MaxJobsPA": "MaxJobsPerAccount",
    "MaxSubmitPA": "MaxSubmitJobsPerAccount",
}


def _limit(job: PendingJob, reason: str, match: re.Match[str], context: Context) -> Explanation:
    kind, group, rest = match["kind"], match["group"], match["rest"]
    column, scope = _column(kind, group, rest)
    limits, holder = _holder(job, kind, column, context)
    tres = next((tres for pattern, tres in _RESOURCE if pattern.search(rest)), None)
    label = _COLUMN_NAME.get(column, column)
    if limits is None:
        where = f"QOS '{job.qos}'" if kind == "QOS" else f"account '{job.account}' or one above it"
        return Explanation(
            reason=reason,
            sentence=f"Waiting on a limit of {where} ({reason}); svc could not read its value.",
            needs_action=scope == "per job",
        )
    binding_scope = "qos" if kind == "QOS" else "association"
    if column == "MaxWall":
        asked = format_time_limit(job.time_limit) or job.time_limit
        allowed = format_time_limit(limits.wall) or limits.wall
        return Explanation(
            reason=reason,
            sentence=f"Job {job.job_id} asks for {asked}, more than {holder} allows per job (MaxWall {allowed}): "
            f"it will not start; ask for at most {allowed}.",
            binding=Binding(scope=binding_scope, name=limits.name, field="MaxWall", value=allowed, used=asked),
            needs_action=True,
        )
    counted = _counted(job, kind, group, column, context)
    if column in limits.counts:
        most = limits.counts[column]
        states = {"PENDING", "RUNNING"} if "Submit" in column else {"RUNNING"}
        used = sum(1 for live in counted if live.state in states)
        noun = "submitted (pending or running) jobs" if "Submit" in column else "running jobs"
        who = "you already have" if scope == "per user" else "there are already"
        return Explanation(
            reason=reason,
            sentence=f"Waiting for a job slot: {holder} allows {most} {noun} {scope} ({label}={most}) and {who} "
            f"{used}.",
            binding=Binding(scope=binding_scope, name=limits.name, field=label, value=str(most), used=str(used)),
        )
    entries = limits.tres.get(column, {})
    key = _tres_key(tres, entries, job)
    if key is None:
        return Explanation(
            reason=reason,
            sentence=f"Waiting on the {label} limit of {holder} ({reason}); svc found no value for it there.",
        )
    value = entries[key]
    if scope == "per job":
        return Explanation(
            reason=reason,
            sentence=f"Job {job.job_id} asks for {_amount(key, job.tres.get(key, '0'))}, more than {holder} allows per "
            f"job ({label} {key}={value}): it will not start; ask for at most {_amount(key, value)}.",
            binding=Binding(
                scope=binding_scope,
                name=limits.name,
                field=label,
                value=f"{key}={value}",
                used=str(_number(key, job.tres.get(key, "0"))),
            ),
            needs_action=True,
        )
    used = sum(_number(key, live.tres.get(key, "0")) for live in counted if live.state == "RUNNING")
    whose = "your running jobs" if scope == "per user" else "its running jobs"
    in_use = _amount(key, used) if key == "mem" else used
    return Explanation(
        reason=reason,
        sentence=f"Waiting for {_tres_word(key)}: {holder} allows {_amount(key, value)} {scope} "
        f"({label} {key}={value}) and {whose} already use {in_use}; this job asks for "
        f"{_amount(key, job.tres.get(key, '0'))}.",
        binding=Binding(scope=binding_scope, name=limits.name, field=label, value=f"{key}={value}", used=str(used)),
    )


def _holder(job: PendingJob, kind: str, column: str, context: Context) -> tuple[Limits | None, str]:
    """The limits that set ``column`` and how to name them: the job's QOS, or its user's association in its
    account, else the account's own row (an association inherits its account's limits)."""
    if kind == "QOS":
        return context.qos, f"QOS '{job.qos}'"
    rows = context.associations or {}
    for key, words in (
        ((job.account, job.user), f"your association in account '{job.account}'"),
        ((job.account, ""), f"account '{job.account}'"),
    ):
        limits = rows.get(key)
        if limits is not None and (
            column in limits.counts or limits.tres.get(column) or (column == "MaxWall" and limits.wall)
        ):
            return limits, words
    return None, ""


def _counted(job: PendingJob, kind: str, group: str, column: str, context: Context) -> list[LiveJob]:
    """The live jobs a limit counts: those of the job's QOS or account, all of them for a Grp* limit, the
    account's share for a per-account one, else the user's."""
    if kind == "QOS":
        jobs = [live for live in context.live if live.qos == job.qos]
    else:
        jobs = [live for live in context.live if live.account == job.account]
    if group == "Grp":
        return jobs
    if column.endswith("PA"):
        return [live for live in jobs if live.account == job.account]
    return [live for live in jobs if live.user == job.user]


def _tres_key(tres: str | None, entries: dict[str, str], job: PendingJob) -> str | None:
    """The TRES of ``entries`` the reason means: ``gres/`` picks the GRES the job asks for (``gres/gpu``)."""
    if tres is None:
        return None
    if tres.endswith("/"):
        asked = [key for key in entries if key.startswith(tres) and key in job.tres]
        return next(iter(asked or [key for key in entries if key.startswith(tres)]), None)
    return tres if tres in entries else None


def check_time_limit(asked: str, partition: dict[str, str]) -> str | None:
    """Why a job asking for ``asked`` would wait for ever in ``partition`` (its MaxTime is shorter), or ``None``."""
    try:
        want, most = parse_duration(asked), parse_duration(partition.get("MaxTime", ""))
    except SlurmParseError:
        return None
    if want is None or most is None or want <= most:
        return None
    return (
        f"it asks for {format_time_limit(asked)}, more than partition '{partition.get('PartitionName', '?')}' allows "
        f"(MaxTime {format_time_limit(partition['MaxTime'])}): Slurm would accept it and keep it pending for ever "
        "(PartitionTimeLimit)"
    )
