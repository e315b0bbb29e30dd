"""The job-count limits of a transport's user as REST, MCP and the CLI show them, each with the jobs it counts now
(the limits are read by ``svc_host.transports.site_limits`` and kept in the scheduler snapshots)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_host.errors import InvalidRequestError, NotFoundError
from svc_host.slurm import limits

if TYPE_CHECKING:
    from svc_host.runtime.ports import Ports


async def limits_view(host: Ports, transport: str) -> dict[str, Any]:
    """What REST, MCP and the CLI show: the limits of ``transport``'s user, each with the jobs it counts now.

    Raises ``NotFoundError`` for an unknown transport, ``InvalidRequestError`` for one that cannot run Slurm's
    tools."""
    known = host.transports.specs()
    if transport not in known:
        choices = ", ".join(sorted(known))
        raise NotFoundError(f"no transport or SSH profile named {transport!r}; choose one of: {choices}")
    found = (await host.transports.snapshots.limits(transport)).value
    if found is None:
        raise InvalidRequestError(f"transport {transport!r} does not run Slurm's tools: it has no site limits to show")
    counts = await host.submit_throttle.usage(transport, found)
    return {
        "transport": transport,
        "cluster": found.cluster,
        "user": found.user,
        "account": found.account,
        "default_qos": found.default_qos,
        "max_array_size": found.max_array_size,
        "max_job_count": found.max_job_count,
        "in_queue": {"user": counts.user, "default_qos": counts.user_in_qos, "cluster": counts.cluster},
        "submit_limits": [_limit(limit, counts) for limit in found.submit_limits(None)],
        "run_limits": [_limit(limit, counts) for limit in found.run_limits(None)],
        "qos": [_qos(qos) for qos in found.qos.values() if _sets_a_limit(qos)],
        "waiting_submissions": host.submit_throttle.waiting(transport),
    }


def _sets_a_limit(qos: limits.QosLimits) -> bool:
    return any(
        value is not None for value in (qos.max_submit_per_user, qos.max_jobs_per_user, qos.grp_submit, qos.grp_jobs)
    )


def _qos(qos: limits.QosLimits) -> dict[str, Any]:
    return {
        "name": qos.name,
        "max_submit_jobs_per_user": qos.max_submit_per_user,
        "max_jobs_per_user": qos.max_jobs_per_user,
        "grp_submit_jobs": qos.grp_submit,
        "grp_jobs": qos.grp_jobs,
    }


def _limit(limit: limits.Limit, counts: limits.Counts) -> dict[str, Any]:
    return {"name": limit.name, "scope": limit.scope, "value": limit.value, "in_queue": counts.of(limit)}
