"""The QOS and association limits behind a ``QOS*``/``Assoc*`` pending reason, and how much of them is in use.

``QOSMaxGRESPerUser`` is the ``MaxTRESPerUser`` of the job's QOS, ``AssocGrpGRES`` the ``GrpTRES`` of its
association: the reason's words say which column (``Grp``/``Max``, ``PerUser``/``PerAccount``/``PerJob``, jobs,
submissions, wall time) and which TRES (``GRES``, ``Cpu``, ``Node``, ``Mem``, ...). What is in use is counted
from the live jobs the limit counts.
"""

from __future__ import annotations

import re
from typing import Final

from svc_host.slurm.pending_inputs import Limits, LiveJob
from svc_host.slurm.pending_job import Binding, Context, Explanation, PendingJob, amount, number, tres_word
from svc_host.slurm.values import format_time_limit

_RESOURCE: Final = (
    (re.compile(r"GRES"), "gres/"),
    (re.compile(r"Cpu"), "cpu"),
    (re.compile(r"Node"), "node"),
    (re.compile(r"Mem"), "mem"),
    (re.compile(r"Billing"), "billing"),
    (re.compile(r"Energy"), "energy"),
    (re.compile(r"License|Lic"), "license/"),
)
LIMIT_REASON = re.compile(r"^(?P<kind>QOS|Assoc)(?P<group>Grp|Max)(?P<rest>\w+)$")


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


def explain_limit(job: PendingJob, reason: str, match: re.Match[str], context: Context) -> Explanation:
    """The sentence for a reason :data:`LIMIT_REASON` matched: the limit's value where it is set, what the live
    jobs it counts already use, and what this job asks for."""
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
            sentence=f"Job {job.job_id} asks for {amount(key, job.tres.get(key, '0'))}, more than {holder} allows per "
            f"job ({label} {key}={value}): it will not start; ask for at most {amount(key, value)}.",
            binding=Binding(
                scope=binding_scope,
                name=limits.name,
                field=label,
                value=f"{key}={value}",
                used=str(number(key, job.tres.get(key, "0"))),
            ),
            needs_action=True,
        )
    used = sum(number(key, live.tres.get(key, "0")) for live in counted if live.state == "RUNNING")
    whose = "your running jobs" if scope == "per user" else "its running jobs"
    in_use = amount(key, used) if key == "mem" else used
    return Explanation(
        reason=reason,
        sentence=f"Waiting for {tres_word(key)}: {holder} allows {amount(key, value)} {scope} "
        f"({label} {key}={value}) and {whose} already use {in_use}; this job asks for "
        f"{amount(key, job.tres.get(key, '0'))}.",
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
