"""The plugin contract: every hook svc calls, with what it receives and what it must return.

Plugins implement these with ``svc_host.hookimpl`` and register a module in the entry-point group ``svc``::

    # pyproject.toml of a plugin
    [project.entry-points.svc]
    mysite = "svc_mysite.hooks"

Collect hooks (``svc_transports``, ``svc_sync_backends``, ``svc_renderers``, ``svc_api_routers``,
``svc_mcp_tools``, ``svc_cli_commands``, ``svc_background_tasks``, ``svc_session_kinds``) return a list of records
from every plugin; ``svc_settings`` declares the model of the plugin's own configuration section;
the host merges them and refuses duplicate names, naming every provider. ``svc_event`` is a broadcast: every
implementation sees every event. ``svc_health`` answers ``svc plugins`` and ``GET /api/plugins``.

pluggy calls the implementations (tryfirst ones first, then the newest registered, trylast ones last), once
per plugin so that a failure or a wrong record names its plugin. An implementation may take fewer
arguments than the spec; new arguments can be added to a spec without breaking existing plugins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from svc_host.plugin_core.identity import hookspec

if TYPE_CHECKING:
    import click
    from pydantic import BaseModel

    from svc_host.domain.profiles import HostConfig
    from svc_host.plugin_core.records import (
        Event,
        HealthReport,
        RendererSpec,
        SessionKindSpec,
        SyncBackendSpec,
        TaskSpec,
        ToolSpec,
        TransportSpec,
    )
    from svc_host.plugin_core.view import PluginHost
    from svc_host.settings.paths import SvcPaths


@hookspec
def svc_transports(config: HostConfig) -> Sequence[TransportSpec]:
    """Offer ways to reach a Slurm cluster.

    Called when the host builds its transport table: when a server starts (and on first use in a CLI command)
    and again after a profile changes. ``config`` holds the SSH profiles the host knows and which one is
    current. Return one ``TransportSpec`` per transport; names must be unique across all plugins.

    Example::

        @hookimpl
        def svc_transports(config):
            return [TransportSpec(name="mysite", factory=MySiteTransport, description="site gateway")]
    """
    raise NotImplementedError


@hookspec
def svc_sync_backends() -> Sequence[SyncBackendSpec]:
    """Offer ways to copy a mount's local tree to the cluster.

    Called once, when the host builds its name tables (at start, or on first use). Return ``SyncBackendSpec``
    records; ``factory(profile_name, profile)`` builds the backend of one SSH profile.

    Example::

        @hookimpl
        def svc_sync_backends():
            return [SyncBackendSpec(name="rsync", factory=RsyncBackend)]
    """
    raise NotImplementedError


@hookspec
def svc_renderers() -> Sequence[RendererSpec]:
    """Offer batch-script renderers; the host's own ``default`` renderer is registered this way.

    Called once, when the host builds its name tables (at start, or on first use).
    ``render(definition: JobDefinition) -> RenderedScript`` must be pure and raise ``RenderError`` on
    a definition it cannot express.

    Example::

        @hookimpl
        def svc_renderers():
            return [RendererSpec(name="site", render=render_site_script)]
    """
    raise NotImplementedError


@hookspec
def svc_session_kinds() -> Sequence[SessionKindSpec]:
    """Offer kinds of interactive sessions: web apps (JupyterLab, TensorBoard...) a Slurm job runs, reached through
    svc's way in; the built-in kinds come this way too.

    Called once, when the host builds its name tables (at start, or on first use). Return ``SessionKindSpec``
    records; names must be unique across all plugins. ``launch(fields)`` must be pure: it is given the request's
    validated fields (user text with its braces doubled) and returns an ``AppLaunch`` whose argv and env may use
    the placeholders ``{port}``, ``{base_path}``, ``{session_dir}`` and, in env values only, ``{secret}``.

    Example::

        class Fields(BaseModel):
            logdir: str

        @hookimpl
        def svc_session_kinds():
            return [
                SessionKindSpec(
                    name="tensorboard",
                    description="TensorBoard on a log directory",
                    fields=Fields,
                    launch=lambda f: AppLaunch(argv=["tensorboard", "--logdir", f.logdir, "--port", "{port}"]),
                )
            ]
    """
    raise NotImplementedError


@hookspec
def svc_api_routers() -> Sequence[Any]:
    """Offer FastAPI ``APIRouter`` objects to mount on the REST app; the host's routers come this way too.

    Called once per app. Paths should live under ``/api/``. Import FastAPI inside the hook, not at module
    level, so the CLI stays fast.

    Example::

        @hookimpl
        def svc_api_routers():
            from fastapi import APIRouter
            router = APIRouter(prefix="/api/mysite")
            @router.get("/ping")
            async def ping() -> dict[str, bool]:
                return {"ok": True}
            return [router]
    """
    raise NotImplementedError


@hookspec
def svc_mcp_tools() -> Sequence[ToolSpec]:
    """Offer MCP tools; the host's tools are registered this way too.

    Called once, when the host builds its name tables (at start, or on first use); ``svc mcp`` lists them.
    Every tool returns a dict with ``success`` and, on failure, ``error`` (see the MCP spec).

    Example::

        @hookimpl
        def svc_mcp_tools():
            async def ping() -> dict[str, object]:
                return {"success": True}
            return [ToolSpec(name="ping", function=ping, description="Check the server.", read_only=True)]
    """
    raise NotImplementedError


@hookspec
def svc_event(event: Event, host: PluginHost | None) -> None:
    """Observe something that happened: ``job.status_changed``, ``workflow_run.status_changed``,
    ``sweep_run.status_changed``. Called synchronously on the event loop for every event, in the process
    that made the change (a server, or a CLI command driving its own run): enqueue, never do network I/O
    here. An exception is logged and never stops the other observers or the host. Return nothing.

    ``host`` (1.2; declare it to receive it, as for every hook) is the ``PluginHost`` of that process, for its
    paths and settings (``host.plugin_settings(...)``); ``None`` only for an event a test emits straight through
    a plugin manager.

    Example::

        @hookimpl
        def svc_event(event):
            if event.name == "job.status_changed" and event.payload["to"] == "FAILED":
                notify(event.payload)
    """


@hookspec
def svc_background_tasks(host: PluginHost) -> Sequence[TaskSpec]:
    """Offer long-running work a server does for the plugin (delivering an outbox, polling a site service).

    Called once by ``Host.start()`` in servers (``svc serve``, ``svc mcp``; never in CLI commands). Each
    ``TaskSpec.run()`` coroutine runs as its own asyncio task until the host closes, which cancels it
    (handle ``asyncio.CancelledError`` to clean up). A task that raises is logged and not restarted.

    Example::

        @hookimpl
        def svc_background_tasks(host):
            async def deliver() -> None:
                while True:
                    await send_pending(host.paths.state_dir)
                    await asyncio.sleep(5)
            return [TaskSpec(name="mysite-outbox", run=deliver)]
    """
    raise NotImplementedError


@hookspec
def svc_health(paths: SvcPaths) -> HealthReport | None:
    """Say how the plugin is doing, for ``svc plugins`` and ``GET /api/plugins`` (``health``).

    Called each time plugins are listed, in any process (the CLI has no server state): read what the
    plugin keeps on disk under ``paths.state_dir``, quickly and without network I/O. Return ``None`` when
    there is nothing to say.

    Example::

        @hookimpl
        def svc_health(paths):
            pending = count_pending(paths.state_dir / "mysite.db")
            return HealthReport(ok=pending < 100, summary=f"{pending} messages waiting")
    """
    raise NotImplementedError


@hookspec
def svc_cli_commands() -> Sequence[click.Command]:
    """Offer ``svc`` subcommands (click commands or groups); a name must not shadow a built-in command.

    Called only when the CLI needs a command that is not built in (``svc mysite ...``) or lists every
    command (``svc --help``); ``svc --version`` and built-in commands never load plugins for it. Import heavy
    modules inside the command, not at module level.

    Example::

        @hookimpl
        def svc_cli_commands():
            import click

            @click.command()
            def hello() -> None:
                click.echo("hello")
            return [hello]
    """
    raise NotImplementedError


@hookspec
def svc_settings() -> type[BaseModel] | None:
    """Declare the plugin's settings: a pydantic model for the section ``plugins.<plugin name>`` of svc's layered
    configuration (system, user and project files, ``SVC_PLUGINS__<NAME>__<FIELD>`` variables).

    Called whenever the configuration is shown or changed (``svc config show|set``, ``GET|PUT /api/config``):
    the section is shown with the model's defaults filled in, and a value the model refuses is an error naming
    the plugin and the field, and nothing is written. Read the values with ``host.plugin_settings("<plugin name>",
    Model)`` or ``svc_host.plugin.plugin_settings(config, "<plugin name>", Model)``. Return ``None`` for none.
    Settings are shown in full: keep secrets in environment variables.

    Example::

        class MySiteSettings(BaseModel):
            model_config = ConfigDict(extra="forbid")
            qos: str = "normal"

        @hookimpl
        def svc_settings():
            return MySiteSettings
    """
    raise NotImplementedError
