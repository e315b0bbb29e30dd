"""A host as ``svc serve`` runs one, for tests of plugins that work in servers (background tasks, event observers),
reached through public names only: ``serving_host`` makes it, ``ServingHost`` is what a test may do with it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from svc_host.plugin_core.view import PluginHost

if TYPE_CHECKING:
    from svc_host.domain.submission import JobDefinition
    from svc_host.host import Host
    from svc_host.plugin_core.records import Event, HealthReport
    from svc_host.settings.paths import SvcPaths


class PluginSet(Protocol):
    """What a test does with a set of plugins (the ``svc_plugin_manager`` fixture, ``host.plugins``)."""

    def register(self, plugin: object, name: str, *, distribution: str = "local", version: str = "0") -> None:
        """Add an imported plugin object (a module or any object with ``@hookimpl`` functions)."""

    def emit(self, event: Event) -> None:
        """Broadcast ``event`` to every ``svc_event`` observer, as the monitor does."""

    def health(self, paths: SvcPaths) -> dict[str, HealthReport]:
        """Each plugin's ``svc_health`` report, by plugin name."""


class ServingHost(PluginHost, Protocol):
    """A running svc server as a test drives it: what plugins see (``PluginHost``), its plugins, start and close."""

    @property
    def plugins(self) -> PluginSet:
        """The plugins this host calls."""

    async def start(self) -> None:
        """Start as a server does: the monitor, and every plugin's background tasks."""

    async def close(self) -> None:
        """Stop the background tasks and close what the host opened (transports, store)."""


def serving_host(plugins: PluginSet, paths: SvcPaths) -> ServingHost:
    """A server's host on ``paths`` with ``plugins`` (the ``svc_plugin_manager`` fixture) and a SQLite store in
    ``paths.state_dir``; it reads no ``SVC_*`` job defaults and samples no cluster. ``await host.start()`` runs the
    plugins' background tasks; ``await host.close()`` when done."""
    from svc_host.host import Host
    from svc_host.plugin_core.manager import PluginManager
    from svc_host.settings.profiles import ProfileStore
    from svc_host.store.database import Store

    if not isinstance(plugins, PluginManager):
        raise TypeError(f"plugins must be svc's (the svc_plugin_manager fixture), not {type(plugins).__name__}")
    return Host(
        paths=paths,
        plugins=plugins,
        profiles=ProfileStore(paths.profiles_file),
        store=Store(f"sqlite:///{paths.state_dir / 'svc.db'}"),
        source="mcp",  # a server: starts plugin tasks (and no resource sampler, which needs a cluster)
        read_env=False,
    )


def background_task_names(host: ServingHost) -> list[str]:
    """The names of the plugin background tasks a started host runs (``TaskSpec.name``)."""
    return _host(host).plugin_tasks.names()


async def record_job(host: ServingHost, *, transport: str, job_id: str, name: str, source: str) -> None:
    """Record job ``(transport, job_id)`` in the host's store as svc does when it submits one, with no cluster:
    ``source`` is who submitted it (``web``, ``mcp``, ``cli`` or ``workflow``)."""
    from svc_host.store.jobs import add_job

    await _host(host).store.run(
        add_job, transport=transport, job_id=job_id, name=name, source=source, resources={}, command=[]
    )


async def submit_job(host: ServingHost, definition: JobDefinition, *, transport: str) -> str:
    """Submit ``definition`` on ``transport`` as ``svc submit`` does (rendered, recorded, watched); its job id."""
    from svc_host.services.jobs import submit

    return (await submit(_host(host), definition, transport=transport, source="cli")).job_id


def _host(host: ServingHost) -> Host:
    from svc_host.host import Host

    if not isinstance(host, Host):
        raise TypeError(f"host must come from serving_host(), not {type(host).__name__}")
    return host
