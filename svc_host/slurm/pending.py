"""Why a job is pending, in a plain sentence that names the limit and the value that binds.

Slurm gives a pending job one reason word (``squeue``'s NODELIST(REASON), ``scontrol``'s ``Reason=``). Most
words point at a limit set somewhere else: ``QOSMaxGRESPerUser`` is the ``MaxTRESPerUser`` of the job's QOS
(:mod:`svc_host.slurm.pending_limits`), ``PartitionTimeLimit`` the partition's ``MaxTime``. The functions here
join the word with those values (read by :mod:`svc_host.slurm.pending_inputs`) and say what the user can do. A
reason they do not know gets an honest generic sentence, never an error.
"""

from __future__ import annotations

import re
from typing import Final

from svc_host.errors import SlurmParseError
from svc_host.slurm.pending_job import Binding, Context, Explanation, PendingJob, amount, count
from svc_host.slurm.pending_limits import LIMIT_REASON, explain_limit
from svc_host.slurm.values import format_time_limit, parse_duration


def explain(job: PendingJob, context: Context) -> Explanation:
    """The plain sentence for ``job``'s pending reason, naming the binding limit where Slurm has one."""
    reason = job.reason.strip() or "None"
    word = reason.split(",")[0].split(" ")[0]
    if reason.startswith(("ReqNodeNotAvail", "Nodes required for job are DOWN")):
        return _nodes_unavailable(job, reason, context)
    simple = _SIMPLE.get(word)
    if simple is not None:
        return simple(job, reason, context)
    match = LIMIT_REASON.match(word)
    if match is not None:
        return explain_limit(job, reason, match, context)
    return Explanation(
        reason=reason,
        sentence=(
            f"Slurm gives the reason '{reason}' for job {job.job_id}; svc has no plainer explanation of it "
            "(see 'man squeue', JOB REASON CODES)."
        ),
    )


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
    asked = [f"{amount(tres, value)}" for tres, value in job.tres.items() if tres in {"gres/gpu", "cpu", "mem"}]
    nodes = [node for node in context.nodes if node.partition == job.partition and not node.is_down]
    free_gpus = sum(max(0, node.gpus_total - node.gpus_used) for node in nodes)
    total_gpus = sum(node.gpus_total for node in nodes)
    parts = [f"it asks for {', '.join(asked)} on {count(job.nodes, 'node')}"] if asked else []
    binding = None
    if total_gpus and "gres/gpu" in job.tres:
        parts.append(f"partition '{job.partition}' has {free_gpus} of {count(total_gpus, 'gres/gpu')} free now")
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
            f". It asks for {count(job.nodes, 'node')} and partition '{job.partition}' has {usable} up: "
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
    failed = re.findall(r"(\w+):([0-9]+(?:_[0-9]+)?)\(failed\)", job.dependency)
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
