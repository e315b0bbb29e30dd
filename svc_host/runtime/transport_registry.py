"""One live transport instance per name (one SSH connection per profile), built from the plugins' specs."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from svc_host.domain.profiles import HostConfig
from svc_host.errors import PluginError, SvcError
from svc_host.plugin_core.manager import PluginManager
from svc_host.plugin_core.records import TransportSpec, takes_keyword
from svc_host.runtime.snapshots import SchedulerSnapshots
from svc_host.settings.profiles import ProfilesWatch
from svc_host.transports.base import Transport

if TYPE_CHECKING:
    from svc_host.plugin_core.view import PluginHost

log = logging.getLogger(__name__)


def connection_changed(old: HostConfig, new: HostConfig, name: str) -> bool:
    """True when profile ``name`` was added, removed or now reaches its cluster differently (mounts and
    description aside). Names that are no profile (``local``, a site's transport) never change here."""
    before, after = old.profiles.get(name), new.profiles.get(name)
    if before is None or after is None:
        return before is not after
    return before.connection_settings() != after.connection_settings()


class TransportRegistry:
    """Builds transports on first use and keeps them until their profile changes, ``reload`` or ``close``.

    With a ``watch``, every look at ``config`` first checks the profiles file (one ``stat``): profiles added or
    changed by another process (``svc profile add`` while ``svc serve`` runs) count at once, and a profile
    whose connection settings changed loses its kept transport (closed in the background), so the next
    command connects to the new target.
    """

    def __init__(
        self,
        plugins: PluginManager,
        config: HostConfig | None = None,
        *,
        watch: ProfilesWatch | None = None,
        host: PluginHost | None = None,
    ) -> None:
        self.plugins = plugins
        self.host = host
        """Given to transport factories that declare a ``host`` parameter (``TransportSpec``)."""
        self._watch = watch
        self._config = config or (watch.config if watch is not None else HostConfig())
        self._instances: dict[str, Transport] = {}
        self._building = threading.local()
        """Per thread, the names whose factories are running, outermost first (``names``): a factory that asks
        for one of them again is a cycle (``svc mcp`` builds in its loading thread and its event loop at once)."""
        self._closing: set[asyncio.Task[None]] = set()
        self.snapshots = SchedulerSnapshots(self.get)
        """The last queue and resources answers of each transport, shared by every client of this process."""

    @property
    def config(self) -> HostConfig:
        """The profiles in use, the file's latest valid version when watched."""
        if self._watch is not None:
            fresh = self._watch.poll()
            if fresh is not None:
                self._adopt(fresh)
        return self._config

    def specs(self) -> dict[str, TransportSpec]:
        """Every transport on offer (duplicate names raise ``PluginError`` naming the providers)."""
        return self.plugins.transport_specs(self.config)

    def spec(self, name: str) -> TransportSpec:
        """What the transport called ``name`` declares (its capabilities); an unknown name lists the choices."""
        return self.plugins.transport_spec(name, self.config)

    def get(self, name: str) -> Transport:
        """The transport called ``name``; an unknown name lists the choices."""
        config = self.config
        if name not in self._instances:
            factory = self.plugins.transport_spec(name, config).factory
            building: list[str] = self._building.__dict__.setdefault("names", [])
            if name in building:
                cycle = " -> ".join([*building[building.index(name) :], name])
                raise PluginError(
                    f"transport {name!r} is built on itself ({cycle}): its factory asks the host for a transport "
                    f"that is being built from it"
                )
            building.append(name)
            try:
                self._instances[name] = factory(host=self.host) if takes_keyword(factory, "host") else factory()
            finally:
                building.pop()
        return self._instances[name]

    def unusable_reason(self, name: str) -> str | None:
        """Why the transport called ``name`` cannot be used now (its factory refuses it, e.g. a site plugin that is
        not configured yet), or ``None`` when it can. Makes the instance, as the first command would; connects
        nothing."""
        try:
            self.get(name)
        except SvcError as exc:
            return str(exc)
        return None

    async def reload(self, config: HostConfig) -> None:
        """Adopt ``config`` now (after this process changed the profiles); changed profiles reconnect."""
        self._adopt(config)
        await self._settle()

    def close_later(self, closing: Coroutine[Any, Any, None]) -> None:
        """Run ``closing`` (a ``close()`` of something out of date) in the background; ``close`` waits for it."""
        try:
            task = asyncio.get_running_loop().create_task(closing)
        except RuntimeError:  # no event loop (a synchronous CLI path): nothing was connected through it
            closing.close()
            return
        self._closing.add(task)
        task.add_done_callback(self._closed)

    async def close(self) -> None:
        instances, self._instances = list(self._instances.values()), {}
        await self.snapshots.close()
        await asyncio.gather(*(transport.close() for transport in instances), return_exceptions=True)
        await self._settle()

    def _adopt(self, config: HostConfig) -> None:
        old, self._config = self._config, config
        # a copy taken at once (``svc mcp`` may read the profiles in its loading thread while a tool makes a transport)
        changed = [name for name in list(self._instances) if connection_changed(old, config, name)]
        for name in changed:
            log.info("SSH profile %r changed; its connection is closed and made again on next use", name)
            self.close_later(self._instances.pop(name).close())
        if changed:
            self.snapshots.clear()  # a changed name may now reach another cluster

    def _closed(self, task: asyncio.Task[None]) -> None:
        self._closing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("closing an out-of-date connection failed: %s", task.exception())

    async def _settle(self) -> None:
        await asyncio.gather(*self._closing, return_exceptions=True)
