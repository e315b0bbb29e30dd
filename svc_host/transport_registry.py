"""One live transport instance per name (one SSH connection per profile), built from the plugins' specs."""

from __future__ import annotations

import asyncio

from svc_host.domain.profiles import HostConfig
from svc_host.plugin_types import TransportSpec
from svc_host.plugins import PluginManager
from svc_host.scheduler_snapshots import SchedulerSnapshots
from svc_host.transport import Transport


class TransportRegistry:
    """Builds transports on first use and keeps them until ``reload`` or ``close``."""

    def __init__(self, plugins: PluginManager, config: HostConfig | None = None) -> None:
        self.plugins = plugins
        self.config = config or HostConfig()
        self._instances: dict[str, Transport] = {}
        self.snapshots = SchedulerSnapshots(self.get)
        """The last queue and resources answers of each transport, shared by every client of this process."""

    def specs(self) -> dict[str, TransportSpec]:
        """Every transport on offer (duplicate names raise ``PluginError`` naming the providers)."""
        return self.plugins.transport_specs(self.config)

    def get(self, name: str) -> Transport:
        """The transport called ``name``; an unknown name lists the choices."""
        if name not in self._instances:
            self._instances[name] = self.plugins.transport_spec(name, self.config).factory()
        return self._instances[name]

    async def reload(self, config: HostConfig) -> None:
        """Adopt new profiles: transports are rebuilt on next use."""
        await self.close()
        self.config = config

    async def close(self) -> None:
        instances, self._instances = list(self._instances.values()), {}
        self.snapshots.clear()
        await asyncio.gather(*(transport.close() for transport in instances), return_exceptions=True)
