"""The site's job-count limits (pure): argv builders, parsers of their output, and the headroom they leave.

Slurm refuses an ``sbatch`` outright (``QOSMaxSubmitJobPerUserLimit``, ``AssocMaxSubmitJobLimit``...) when
the user's queued jobs (pending + running) would exceed a *submit* limit: ``MaxSubmitJobs`` of the user's
association (set on it or inherited from the nearest account above that sets one), ``GrpSubmitJobs`` of the
association and of every account above it, ``MaxSubmitJobsPerUser`` and ``GrpSubmitJobs`` of the job's QOS,
and the cluster's ``MaxJobCount``. Every task of a job array counts as one job, pending ones included (an
array of 5 under ``MaxSubmitJobsPerUser=3`` is refused whole). The *run* limits (``MaxJobs``,
``MaxJobsPerUser``, ``GrpJobs``) only keep jobs pending in the queue; they are reported, not throttled on.
``MaxArraySize`` bounds task indexes: an array's highest index must be below it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from svc_host.errors import SlurmParseError
from svc_host.slurm.rows import delimited_rows

ASSOC_FIELDS: Final = ("Cluster", "Account", "User", "Partition", "ParentName", "MaxSubmit", "MaxJobs", "GrpSubmit")
QOS_FIELDS: Final = ("Name", "MaxSubmitPU", "MaxJobsPU", "GrpSubmit", "GrpJobs")
USER_FIELDS: Final = ("User", "DefaultAccount")
DEFAULT_QOS: Final = "normal"
"""The QOS of a job that names none when its association sets no ``DefaultQOS`` (Slurm's own default)."""
_SACCTMGR: Final = ["sacctmgr", "--noheader", "--parsable2", "--readonly"]


_SUBMIT_LIMIT_REASON = re.compile(r"\b(?:QOS|Assoc)\w*Submit\w*Limit\b")


def submit_limit_refusal(stderr: str) -> str | None:
    """The reason sbatch names when it refused a job for a submit limit (``QOSMaxSubmitJobPerUserLimit``,
    ``AssocGrpSubmitJobsLimit``...): the job fits once queued jobs end. None for any other failure (a size or
    time limit, which waiting does not fix, prints the same "Job violates accounting/QOS policy" line)."""
    found = _SUBMIT_LIMIT_REASON.search(stderr)
    return found.group(0) if found is not None else None


def assoc_argv() -> list[str]:
    """Every association with its job-count limits (parents are needed to resolve inheritance)."""
    return [*_SACCTMGR, "show", "assoc", f"format={','.join(ASSOC_FIELDS)},DefaultQOS"]


def qos_argv() -> list[str]:
    return [*_SACCTMGR, "show", "qos", f"format={','.join(QOS_FIELDS)}"]


def user_argv(user: str) -> list[str]:
    return [*_SACCTMGR, "show", "user", user, f"format={','.join(USER_FIELDS)}"]


def config_argv() -> list[str]:
    return ["scontrol", "show", "config"]


@dataclass(frozen=True)
class Limit:
    """One limit on how many jobs may be queued (or run): its Slurm name, whose it is, and its value."""

    name: str
    scope: str
    value: int
    per_qos: bool
    """Counts only the user's jobs in the job's QOS (else every job of the user)."""
    whole_cluster: bool = False
    """Counts every user's jobs (``MaxJobCount``)."""

    def describe(self) -> str:
        return f"{self.name} {self.value} of {self.scope}"


@dataclass(frozen=True)
class Association:
    cluster: str
    account: str
    user: str
    partition: str
    parent: str
    max_submit: int | None
    max_jobs: int | None
    grp_submit: int | None
    default_qos: str


@dataclass(frozen=True)
class QosLimits:
    name: str
    max_submit_per_user: int | None
    max_jobs_per_user: int | None
    grp_submit: int | None
    grp_jobs: int | None


@dataclass(frozen=True)
class SiteLimits:
    """What the site allows one user: read once per profile (``svc_host.transports.site_limits``)."""

    cluster: str
    user: str
    account: str
    default_qos: str
    max_array_size: int | None
    max_job_count: int | None
    association: tuple[Association, ...]
    """The user's association first, then each account above it up to ``root``."""
    qos: Mapping[str, QosLimits]

    def submit_limits(self, qos: str | None) -> list[Limit]:
        """The limits that make sbatch refuse a job of this user in ``qos`` (the default QOS when None)."""
        name = qos or self.default_qos
        found: list[Limit] = []
        inherited = next((a for a in self.association if a.max_submit is not None), None)
        if inherited is not None and inherited.max_submit is not None:
            found.append(Limit("MaxSubmitJobs", _assoc_scope(inherited), inherited.max_submit, per_qos=False))
        found += [
            Limit("GrpSubmitJobs", _assoc_scope(a), a.grp_submit, per_qos=False)
            for a in self.association
            if a.grp_submit is not None
        ]
        limits = self.qos.get(name)
        if limits is not None and limits.max_submit_per_user is not None:
            found.append(Limit("MaxSubmitJobsPerUser", f"QOS {name}", limits.max_submit_per_user, per_qos=True))
        if limits is not None and limits.grp_submit is not None:
            found.append(Limit("GrpSubmitJobs", f"QOS {name}", limits.grp_submit, per_qos=True))
        if self.max_job_count is not None:
            found.append(Limit("MaxJobCount", "the cluster", self.max_job_count, per_qos=False, whole_cluster=True))
        return found

    def run_limits(self, qos: str | None) -> list[Limit]:
        """The limits that keep this user's jobs in ``qos`` pending (not refused): shown, not throttled on."""
        name = qos or self.default_qos
        found: list[Limit] = []
        inherited = next((a for a in self.association if a.max_jobs is not None), None)
        if inherited is not None and inherited.max_jobs is not None:
            found.append(Limit("MaxJobs", _assoc_scope(inherited), inherited.max_jobs, per_qos=False))
        limits = self.qos.get(name)
        if limits is not None and limits.max_jobs_per_user is not None:
            found.append(Limit("MaxJobsPerUser", f"QOS {name}", limits.max_jobs_per_user, per_qos=True))
        if limits is not None and limits.grp_jobs is not None:
            found.append(Limit("GrpJobs", f"QOS {name}", limits.grp_jobs, per_qos=True))
        return found


@dataclass(frozen=True)
class Counts:
    """Jobs in the queue (pending or running, one per array task) that the limits count."""

    user: int
    user_in_qos: int
    cluster: int

    def of(self, limit: Limit) -> int:
        return self.cluster if limit.whole_cluster else self.user_in_qos if limit.per_qos else self.user


@dataclass(frozen=True)
class Headroom:
    """How many more jobs fit now, and the limit that binds (None: nothing limits)."""

    room: int | None
    binding: Limit | None
    queued: int

    def reason(self) -> str:
        """``queued: MaxSubmitJobsPerUser 3 of QOS q reached (3 in queue)``."""
        if self.binding is None:
            return ""
        return f"queued: {self.binding.describe()} reached ({self.queued} in queue)"


def headroom(limits: Sequence[Limit], counts: Counts) -> Headroom:
    """The room the tightest of ``limits`` leaves (never below 0)."""
    best = Headroom(None, None, 0)
    for limit in limits:
        queued = counts.of(limit)
        room = max(0, limit.value - queued)
        if best.room is None or room < best.room:
            best = Headroom(room, limit, queued)
    return best


def parse_config(stdout: str) -> dict[str, str]:
    """``scontrol show config`` as ``{key: value}`` (``MaxArraySize = 1001`` lines)."""
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and " " not in key.strip():
            found[key.strip()] = value.strip()
    return found


def parse_qos(stdout: str) -> dict[str, QosLimits]:
    found: dict[str, QosLimits] = {}
    for number, row in delimited_rows("sacctmgr show qos", stdout, QOS_FIELDS):
        found[row["Name"]] = QosLimits(
            name=row["Name"],
            max_submit_per_user=_count("qos", number, row["MaxSubmitPU"]),
            max_jobs_per_user=_count("qos", number, row["MaxJobsPU"]),
            grp_submit=_count("qos", number, row["GrpSubmit"]),
            grp_jobs=_count("qos", number, row["GrpJobs"]),
        )
    return found


def parse_assocs(stdout: str) -> list[Association]:
    return [
        Association(
            cluster=row["Cluster"],
            account=row["Account"],
            user=row["User"],
            partition=row["Partition"],
            parent=row["ParentName"],
            max_submit=_count("assoc", number, row["MaxSubmit"]),
            max_jobs=_count("assoc", number, row["MaxJobs"]),
            grp_submit=_count("assoc", number, row["GrpSubmit"]),
            default_qos=row["DefaultQOS"],
        )
        for number, row in delimited_rows("sacctmgr show assoc", stdout, (*ASSOC_FIELDS, "DefaultQOS"))
    ]


def parse_default_account(stdout: str, user: str) -> str | None:
    for _, row in delimited_rows("sacctmgr show user", stdout, USER_FIELDS):
        if row["User"] == user:
            return row["DefaultAccount"] or None
    return None


def site_limits(*, user: str, user_out: str, assoc_out: str, qos_out: str, config_out: str) -> SiteLimits:
    """Put the four answers together: the user's association chain on this cluster and every QOS."""
    config = parse_config(config_out)
    cluster = config.get("ClusterName", "")
    assocs = [a for a in parse_assocs(assoc_out) if not cluster or a.cluster == cluster]
    account = parse_default_account(user_out, user) or next((a.account for a in assocs if a.user == user), "")
    chain = association_chain(assocs, user, account)
    default_qos = next((a.default_qos for a in chain if a.default_qos), DEFAULT_QOS)
    return SiteLimits(
        cluster=cluster,
        user=user,
        account=account,
        default_qos=default_qos,
        max_array_size=_config_int(config, "MaxArraySize"),
        max_job_count=_config_int(config, "MaxJobCount"),
        association=tuple(chain),
        qos=parse_qos(qos_out),
    )


def association_chain(assocs: list[Association], user: str, account: str) -> list[Association]:
    """The user's association in ``account`` (not a partition's), then the accounts above it to ``root``."""
    mine = next((a for a in assocs if a.user == user and a.account == account and not a.partition), None)
    if mine is None:
        return []
    accounts = {a.account: a for a in assocs if not a.user}
    chain, seen = [mine], set()
    above = accounts.get(account)
    while above is not None and above.account not in seen:
        seen.add(above.account)
        chain.append(above)
        above = accounts.get(above.parent) if above.parent else None
    return chain


def _assoc_scope(assoc: Association) -> str:
    if assoc.user:
        return f"association {assoc.account}/{assoc.user}"
    return f"account {assoc.account}"


def _count(what: str, number: int, value: str) -> int | None:
    if not value:
        return None
    if not value.isdigit():
        problem = f"limit {value!r} is not a number"
        raise SlurmParseError(f"unexpected sacctmgr show {what} output on line {number}: {problem}")
    return int(value)


def _config_int(config: Mapping[str, str], key: str) -> int | None:
    value = config.get(key, "")
    return int(value) if value.isdigit() else None
