"""``Host``: everything one svc process works with, assembled once and shared by REST, MCP and CLI.

The store, the monitor and the resource sampler are made on first use, so a command that only talks to
the scheduler (``svc jobs -t PROFILE``) never imports the ORM, and ``svc mcp`` answers ``initialize``
before any of them exist.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel

from svc_host.errors import NotFoundError
from svc_host.plugin_core.manager import PluginManager, get_plugin_manager
from svc_host.plugin_core.tasks import PluginTasks
from svc_host.plugin_core.view import JobRecordView
from svc_host.runtime.clusters_in_use import ClustersInUse, InUseSettings
from svc_host.runtime.transport_registry import TransportRegistry
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore, ProfilesWatch
from svc_host.transports.base import Transport

if TYPE_CHECKING:
    from svc_host.plugin_core.records import Event
    from svc_host.runtime.default_cluster import DefaultClusterWatch
    from svc_host.runtime.monitor import Monitor
    from svc_host.runtime.sampler import ResourceSampler
    from svc_host.runtime.throttle import SubmitThrottle
    from svc_host.schedules.scheduler import Scheduler
    from svc_host.sessions.watch import SessionWatch
    from svc_host.settings.config import SvcConfig
    from svc_host.store.database import Store
    from svc_host.sweeps.orchestrator import SweepOrchestrator
    from svc_host.transports.sync_backend import SyncBackend
    from svc_host.workflows.engine import WorkflowEngine

Source = Literal["web", "mcp", "cli"]
M = TypeVar("M", bound=BaseModel)


class Host:
    """Paths, plugins, profiles, transports, the store, the monitor and the run services of one process.

    ``read_env`` is False for the MCP server: no current profile, no cluster or configuration SVC_* variables.
    Without a ``store``, the store at ``paths.database_url`` is opened on first use of ``host.store``.
    The Host owns the long-running services (the workflow engine and the sweep orchestrator, one per process,
    sharing one lease owner name): made on first use, started by ``start`` in servers (``svc serve``,
    ``svc mcp``) so they take over runs and sweeps nobody drives, and closed by ``close``.
    """

    def __init__(
        self,
        *,
        paths: SvcPaths,
        plugins: PluginManager,
        profiles: ProfileStore,
        source: Source,
        store: Store | None = None,
        read_env: bool = True,
    ) -> None:
        self.paths = paths
        self.plugins = plugins
        self.profiles = profiles
        self.source: Source = source
        self.read_env = read_env
        self._store = store
        self._monitor: Monitor | None = None
        self._resource_sampler: ResourceSampler | None = None
        self._submit_throttle: SubmitThrottle | None = None
        self._sync_backends: dict[str, tuple[dict[str, object], Transport | None, SyncBackend]] = {}
        self._engine: WorkflowEngine | None = None
        self._orchestrator: SweepOrchestrator | None = None
        self._scheduler: Scheduler | None = None
        self._session_watch: SessionWatch | None = None
        self._default_watch: DefaultClusterWatch | None = None
        self.plugin_tasks = PluginTasks()
        self.clusters_in_use = ClustersInUse(InUseSettings.from_env(self._env))
        """The clusters REST requests looked at lately (marked by the API's cluster parameter)."""
        self.transports = TransportRegistry(self.plugins, watch=ProfilesWatch(self.profiles, env=self._env), host=self)

    @classmethod
    def create(
        cls,
        source: Source,
        *,
        paths: SvcPaths | None = None,
        plugins: PluginManager | None = None,
        read_env: bool = True,
    ) -> Host:
        paths = paths or SvcPaths.from_env()
        plugins = plugins or get_plugin_manager()
        return cls(
            paths=paths,
            plugins=plugins,
            profiles=ProfileStore(paths.profiles_file, held_names=plugins.held_transport_names),
            source=source,
            read_env=read_env,
        )

    @property
    def _env(self) -> Mapping[str, str] | None:
        return os.environ if self.read_env else None

    @property
    def store(self) -> Store:
        """The database (opened, and migrated, on first use)."""
        if self._store is None:
            from svc_host.store.database import Store

            self._store = Store(self.paths.database_url)
        return self._store

    @property
    def monitor(self) -> Monitor:
        """The job monitor on the store and the transports (made on first use, started by ``start``)."""
        if self._monitor is None:
            from svc_host.runtime.monitor import Monitor

            self._monitor = Monitor(self.store, self.transports, self.emit)
        return self._monitor

    @property
    def submit_throttle(self) -> SubmitThrottle:
        """The submission throttle of workflow jobs and sweep cells (made on first use, woken by the monitor)."""
        if self._submit_throttle is None:
            from svc_host.runtime.throttle import SubmitThrottle

            self._submit_throttle = SubmitThrottle(self.transports.snapshots)
            self.monitor.add_listener(self._submit_throttle.on_changes)
        return self._submit_throttle

    @property
    def resource_sampler(self) -> ResourceSampler:
        """The GPU-use history sampler of ``svc serve`` (made on first use)."""
        if self._resource_sampler is None:
            from svc_host.runtime.sampler import ResourceSampler, SamplerSettings

            self._resource_sampler = ResourceSampler(
                self.store,
                self.transports,
                self.watched_clusters,
                self.emit,
                SamplerSettings.from_env(self._env),
            )
        return self._resource_sampler

    async def watched_clusters(self) -> list[str]:
        """The clusters whose live numbers this process keeps (the sampler's): the server's default, those with
        live jobs, those looked at lately; a bounded few (``clusters_in_use``)."""
        from svc_host.store.jobs import live_transports

        live = await self.store.run(live_transports)
        return self.clusters_in_use.watched(self.server_transport_name(), live)

    def emit(self, event: Event) -> None:
        """Announce a change, the one way every listener hears of it: this process's event hub (the dashboard's
        stream, MCP waits) and every ``svc_event`` observer (plugins), whichever interfaces are loaded."""
        from svc_host.runtime.events import event_hub

        event_hub().publish(event)
        self.plugins.emit(event, self)

    def config(self) -> SvcConfig:
        """The merged job defaults (system, user, project files; SVC_* variables unless ``read_env`` is off)."""
        from svc_host.settings.config import load_config

        return load_config(self.paths, env=self._env)

    def plugin_settings(self, name: str, model: type[M]) -> M:
        """The section ``plugins.<name>`` of this process's configuration as ``model``."""
        from svc_host.plugin_core.settings import plugin_settings

        return plugin_settings(self.config(), name, model)

    async def find_job(self, transport: str, job_id: str) -> JobRecordView | None:
        """The latest record of a job svc submitted, as plugins see it (``PluginHost.find_job``)."""
        from svc_host.store.jobs import find_job

        record = await self.store.run(find_job, transport, job_id)
        if record is None:
            return None
        return JobRecordView(
            transport=record.transport,
            job_id=record.job_id,
            name=record.name,
            source=record.source,
            state=record.state,
            exit_code=record.exit_code,
            submitted_at=record.submitted_at,
            ended_at=record.ended_at,
        )

    def server_transport_name(self) -> str:
        """The server's default cluster: ``SVC_TRANSPORT`` if set, else the current SSH profile, else ``local``."""
        from svc_host.settings.profiles import default_cluster

        return default_cluster(os.environ if self.read_env else None, self.transports.config.current_profile)

    @property
    def default_watch(self) -> DefaultClusterWatch:
        """Announces each move of the server's default cluster (``server.default_changed``), made here or by
        another process (``svc profile use``); ``svc serve`` looks for the latter every few seconds."""
        if self._default_watch is None:
            from svc_host.runtime.default_cluster import DefaultClusterWatch

            self._default_watch = DefaultClusterWatch(self.server_transport_name, self.emit)
        return self._default_watch

    def transport(self, name: str | None = None) -> Transport:
        """A transport by name (``None`` or ``local`` is the local scheduler)."""
        return self.transports.get(name or "local")

    def sync_backend(self, profile_name: str) -> SyncBackend:
        """The sync backend of one SSH profile, the one its ``sync_backend`` names, made on the profile's transport
        (one instance per profile, kept until the profile's connection settings or its transport change); an unknown
        name lists the backends on offer and their plugins."""
        profiles = self.transports.config.profiles
        if profile_name not in profiles:
            known = ", ".join(sorted(profiles)) or "none"
            raise NotFoundError(f"SSH profile {profile_name!r} not found; known: {known}")
        settings = profiles[profile_name].connection_settings()
        spec = self.plugins.sync_backend(profiles[profile_name].sync_backend)
        transport = self.transport(profile_name) if spec.takes_transport else None
        kept = self._sync_backends.get(profile_name)
        if kept is not None and kept[0] == settings and kept[1] is transport:
            return kept[2]
        if kept is not None:
            self.transports.close_later(kept[2].close())
        backend = spec.create(profile_name, profiles[profile_name], transport)
        self._sync_backends[profile_name] = (settings, transport, backend)
        return backend

    async def reload_profiles(self) -> None:
        """Adopt the profiles this process just changed: profiles whose connection settings changed reconnect
        on next use (changes by other processes are seen without it, see ``TransportRegistry``)."""
        await self.transports.reload(self.profiles.host_config(env=self._env))

    async def _close_sync_backends(self) -> None:
        kept, self._sync_backends = list(self._sync_backends.values()), {}
        for _, _, backend in kept:
            await backend.close()

    async def workflow_engine(self) -> WorkflowEngine:
        """This process's workflow engine, started (servers adopt orphaned runs, the CLI only drives its own)."""
        if self._engine is None:
            from svc_host.workflows.engine import WorkflowEngine

            self._engine = WorkflowEngine(self, adopt_orphans=self.source != "cli")
        await self._engine.start()
        return self._engine

    async def sweep_orchestrator(self) -> SweepOrchestrator:
        """This process's sweep orchestrator on its workflow engine, started."""
        if self._orchestrator is None:
            from svc_host.sweeps.orchestrator import SweepOrchestrator

            self._orchestrator = SweepOrchestrator(await self.workflow_engine(), adopt_orphans=self.source != "cli")
        await self._orchestrator.start()
        return self._orchestrator

    async def close_services(self) -> None:
        """Close the orchestrator, then the engine (each releases its leases); they are made again on next use."""
        orchestrator, engine, self._orchestrator, self._engine = self._orchestrator, self._engine, None, None
        if orchestrator is not None:
            await orchestrator.close()
        if engine is not None:
            await engine.close()

    async def start(self) -> None:
        """Start the monitor; a server (REST, MCP) also starts its run services."""
        await self.monitor.start()
        if self.source != "cli":
            # name tables now: a duplicate renderer, backend, tool or transport stops a server at start
            self.plugins.build_tables()
            self.transports.specs()
            self.plugin_tasks.start(self.plugins.background_tasks(self))
            await self.sweep_orchestrator()
        if self.source == "web":  # the resource history and schedules: once per server, not per MCP session
            self.resource_sampler.start()
            self.default_watch.start()
            await self._start_scheduler()
        if self.source in ("web", "mcp"):  # an agent's sessions move without svc serve (moves are compare-and-set)
            await self._start_session_watch()

    async def _start_scheduler(self) -> None:
        from svc_host.schedules.launch import HostLauncher
        from svc_host.schedules.scheduler import Scheduler, tick_seconds

        self._scheduler = Scheduler(self.store, HostLauncher(self), tick_seconds=tick_seconds(self._env))
        await self._scheduler.start()

    async def _start_session_watch(self) -> None:
        from svc_host.sessions.watch import SessionWatch

        self._session_watch = SessionWatch(self)
        await self._session_watch.start()

    async def close(self) -> None:
        if self._session_watch is not None:
            await self._session_watch.close()
            self._session_watch = None
        if self._scheduler is not None:  # first: it fires through the services closed below
            await self._scheduler.close()
            self._scheduler = None
        await self.plugin_tasks.stop()
        if self._default_watch is not None:
            await self._default_watch.close()
        if self._resource_sampler is not None:
            await self._resource_sampler.stop()
        await self.close_services()
        if self._submit_throttle is not None:
            await self._submit_throttle.close()
        if self._monitor is not None:
            await self._monitor.close()
        await self._close_sync_backends()
        await self.transports.close()
        if self._store is not None:
            self._store.close()
