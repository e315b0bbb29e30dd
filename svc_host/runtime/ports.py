"""What the services (single jobs, workflows, sweeps, schedules, waits) are given to work with: a Protocol of the
ports they use — the store, the transports, the monitor, the submission throttle, configuration and plugins — so
none of them depends on ``Host``, which only assembles these parts and satisfies this Protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from svc_host.plugin_core.manager import PluginManager
    from svc_host.plugin_core.records import Event
    from svc_host.runtime.monitor import Monitor
    from svc_host.runtime.throttle import SubmitThrottle
    from svc_host.runtime.transport_registry import TransportRegistry
    from svc_host.settings.config import SvcConfig
    from svc_host.settings.paths import SvcPaths
    from svc_host.store.database import Store
    from svc_host.transports.base import Transport
    from svc_host.transports.sync_backend import SyncBackend


class Ports(Protocol):
    """The parts of one svc process a service may use."""

    @property
    def paths(self) -> SvcPaths:
        """Where this process keeps its files."""

    @property
    def plugins(self) -> PluginManager:
        """Renderers and the other plugin registrations."""

    @property
    def transports(self) -> TransportRegistry:
        """Every transport by name, with their specs, profiles and scheduler snapshots."""

    @property
    def store(self) -> Store:
        """The database."""

    @property
    def monitor(self) -> Monitor:
        """The status loop."""

    @property
    def submit_throttle(self) -> SubmitThrottle:
        """Admission of workflow jobs and sweep cells under the site's submit limits."""

    def emit(self, event: Event) -> None:
        """Announce a change to every listener (the event hub and ``svc_event`` observers)."""

    def config(self) -> SvcConfig:
        """The merged configuration."""

    def transport(self, name: str | None = None) -> Transport:
        """A transport by name (``None`` or ``local`` is this machine's Slurm)."""

    def sync_backend(self, profile_name: str) -> SyncBackend:
        """The sync backend of one SSH profile."""

    def server_transport_name(self) -> str:
        """The transport a server uses when a request names none."""
