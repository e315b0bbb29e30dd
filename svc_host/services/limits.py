"""Reading a cluster's job-count limits (``svc_host.slurm.limits``) through a transport: four commands at once.

Read once per transport and kept in the transport's scheduler snapshots (:meth:`SchedulerSnapshots.limits`) for
:data:`LIMITS_MAX_AGE` seconds: limits change when an administrator runs sacctmgr, rarely, and a profile whose
connection settings change (a name that may now reach another cluster) forgets them with its other snapshots.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from svc_host.errors import InvalidRequestError, NotFoundError, TransportError
from svc_host.slurm import limits
from svc_host.transports.base import SlurmTransport, Transport

if TYPE_CHECKING:
    from svc_host.host import Host

LIMITS_MAX_AGE = 3600.0
"""Seconds the limits read from a cluster are kept."""


async def read_site_limits(transport: Transport) -> limits.SiteLimits | None:
    """The limits of the transport's user on its cluster; None when the transport cannot run Slurm's tools.

    Raises ``TransportError`` when a command fails (accounting unreachable, sacctmgr missing)."""
    if not isinstance(transport, SlurmTransport):
        return None
    user = await transport.user()
    if user is None:
        raise TransportError(f"transport {transport.name!r} cannot tell which user its jobs run as")
    user_out, assoc_out, qos_out, config_out = await asyncio.gather(
        transport.check(limits.user_argv(user)),
        transport.check(limits.assoc_argv()),
        transport.check(limits.qos_argv()),
        transport.check(limits.config_argv()),
    )
    return limits.site_limits(user=user, user_out=user_out, assoc_out=assoc_out, qos_out=qos_out, config_out=config_out)


async def limits_view(host: Host, transport: str) -> dict[str, Any]:
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
