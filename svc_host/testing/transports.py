"""``profile_transport``: the transport svc makes for an SSH profile, for tests of what runs on top of it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from svc_host.domain.profiles import SSHProfile
    from svc_host.transports.base import SlurmTransport


@contextlib.asynccontextmanager
async def profile_transport(name: str, profile: SSHProfile) -> AsyncIterator[SlurmTransport]:
    """The transport the installed plugins make for SSH profile ``name`` (svc's ssh plugin's), closed on exit: what
    a sync backend's factory is given as ``transport``. A test builds its backend on it::

        async with profile_transport("dev", profile) as transport:
            backend = MyBackend("dev", profile, transport=transport)
    """
    from svc_host.domain.profiles import HostConfig
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.transports.base import SlurmTransport

    spec = get_plugin_manager().transport_spec(name, HostConfig(profiles={name: profile}))
    transport = spec.factory()
    if not isinstance(transport, SlurmTransport):
        raise TypeError(f"the transport of profile {name!r} is a {type(transport).__name__}, not a SlurmTransport")
    try:
        yield transport
    finally:
        await transport.close()
