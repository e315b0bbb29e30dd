"""Reading a cluster's job-count limits (``svc_host.slurm.limits``) through a transport: four commands at once.

Read once per transport and kept in the transport's scheduler snapshots (:meth:`SchedulerSnapshots.limits`) for
:data:`LIMITS_MAX_AGE` seconds: limits change when an administrator runs sacctmgr, rarely, and a profile whose
connection settings change (a name that may now reach another cluster) forgets them with its other snapshots.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from svc_host.errors import TransportError
from svc_host.transports.base import SlurmTransport, Transport

if TYPE_CHECKING:
    from svc_host.slurm.limits import SiteLimits

LIMITS_MAX_AGE = 3600.0
"""Seconds the limits read from a cluster are kept."""


async def read_site_limits(transport: Transport) -> SiteLimits | None:
    """The limits of the transport's user on its cluster; None when the transport cannot run Slurm's tools.

    Raises ``TransportError`` when a command fails (accounting unreachable, sacctmgr missing). The parsers are
    imported here: ``svc jobs`` and the other commands that never ask for limits do not load them."""
    from svc_host.slurm import limits

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
