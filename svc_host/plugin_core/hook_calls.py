"""Calling plugin hooks, and typed access to what plugins offer.

Application code goes through the typed methods of ``PluginHooks`` (``pm.transport_specs(config)``,
``pm.renderer("default")``, ``pm.routers()``...), which the plugin manager (``svc_host.plugin_core.manager``) inherits.
Those methods call the hooks through pluggy (``pm.hook.<name>``), once per implementing plugin via pluggy's subset
hook callers: pluggy matches the arguments (an implementation may take fewer than the spec), runs wrappers and traces
the call, and a failure or a wrong record is still pinned on the plugin that caused it. Name tables (renderers, sync
backends, MCP tools, session kinds; transports per host config) are built once and cached: a duplicate name fails
when the host starts.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import pluggy

from svc_host.errors import PluginError, UnknownTransportError
from svc_host.plugin_core import specs as hookspecs
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

if TYPE_CHECKING:
    import click
    from pydantic import BaseModel

    from svc_host.plugin_core.view import PluginHost
    from svc_host.settings.paths import SvcPaths

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "svc"

PluginStatus = Literal["ok", "failed", "disabled"]


@dataclass
class PluginInfo:
    """What ``svc plugins`` and ``GET /api/plugins`` show about one plugin."""

    name: str
    distribution: str
    version: str
    status: PluginStatus = "ok"
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    delivers: list[str] = field(default_factory=list)
    """Configuration keys the plugin acts on (its module's ``SVC_DELIVERS``), such as
    ``notifications.chat_webhook_url``: a key set with no plugin delivering it is a warning."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": self.hooks,
            "delivers": self.delivers,
            "status": self.status,
            "error": self.error,
        }


class PluginHooks:
    """The hooks of a set of plugins, called one plugin at a time, and typed access to what they offer."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self._pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self._pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}
        self._tables: dict[str, dict[str, tuple[str, Any]]] = {}

    # -- calling hooks through pluggy ----------------------------------------------------------------

    def _call_each(self, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call ``pm.hook.<hook_name>`` once per implementing plugin (with every wrapper around each call).

        A plugin that raises is named: in strict mode as a ``PluginError``, otherwise in the log and in its
        ``PluginInfo``, and the other plugins' results are kept.
        """
        out: list[tuple[str, Any]] = []
        for plugin_name, others in self._call_plan(hook_name):
            try:
                results = self._pm.subset_hook_caller(hook_name, remove_plugins=others)(**kwargs)
            except Exception as exc:  # noqa: BLE001 - third-party code: any failure is pinned on its plugin
                self._hook_failed(plugin_name, hook_name, f"{type(exc).__name__}: {exc}", exc)
                continue
            out.extend((plugin_name, result) for result in results)
        return out

    def _hook_failed(self, plugin_name: str, hook_name: str, reason: str, exc: Exception | None = None) -> None:
        message = f"plugin {self._describe(plugin_name)} failed in {hook_name}: {reason}"
        if self.strict:
            raise PluginError(message) from exc
        log.error("%s", message, exc_info=exc)
        info = self._infos.get(plugin_name)
        if info is not None:
            info.status, info.error = "failed", message

    def _records(self, hook_name: str, record_type: type[Any], **kwargs: Any) -> list[tuple[str, Any]]:
        """The records every plugin returned from a collect hook, each checked to be a ``record_type``."""
        out: list[tuple[str, Any]] = []
        for plugin_name, result in self._call_each(hook_name, **kwargs):
            if isinstance(result, (str, bytes)) or not isinstance(result, Sequence):
                self._hook_failed(
                    plugin_name,
                    hook_name,
                    f"returned {type(result).__name__}, expected a list of {record_type.__name__}",
                )
                continue
            wrong = [record for record in result if not isinstance(record, record_type)]
            if wrong:
                self._hook_failed(
                    plugin_name,
                    hook_name,
                    f"returned {type(wrong[0]).__name__} {wrong[0]!r:.60}, expected {record_type.__name__}",
                )
                continue
            out.extend((plugin_name, record) for record in result)
        return out

    # -- name tables ---------------------------------------------------------------------------------

    def _name_table(
        self, kind: str, hook_name: str, record_type: type[Any], **kwargs: Any
    ) -> dict[str, tuple[str, Any]]:
        providers: dict[str, list[str]] = {}
        table: dict[str, tuple[str, Any]] = {}
        for plugin_name, record in self._records(hook_name, record_type, **kwargs):
            providers.setdefault(record.name, []).append(plugin_name)
            table[record.name] = (plugin_name, record)
        self._refuse_duplicates(kind, providers)
        return table

    def _refuse_duplicates(self, kind: str, providers: Mapping[str, list[str]]) -> None:
        """Raise ``PluginError`` naming every provider (in calling order) of every name offered more than once."""
        duplicates = {name: " and ".join(map(self._describe, who)) for name, who in providers.items() if len(who) > 1}
        if duplicates:
            lines = "; ".join(f"{name!r} from {who}" for name, who in sorted(duplicates.items()))
            raise PluginError(f"duplicate {kind} names: {lines}. Disable one with SVC_DISABLE_PLUGINS.")

    def _cached_table(self, kind: str, hook_name: str, record_type: type[Any]) -> dict[str, tuple[str, Any]]:
        if hook_name not in self._tables:
            self._tables[hook_name] = self._name_table(kind, hook_name, record_type)
        return self._tables[hook_name]

    def build_tables(self) -> None:
        """Build the renderer, sync backend, MCP tool and session kind tables now; a duplicate name raises
        ``PluginError``.

        ``Host.start()`` calls this so that a conflict stops a server at start, not its first submit.
        """
        self._cached_table("renderer", "svc_renderers", RendererSpec)
        self._cached_table("sync backend", "svc_sync_backends", SyncBackendSpec)
        self._cached_table("MCP tool", "svc_mcp_tools", ToolSpec)
        self._cached_table("session kind", "svc_session_kinds", SessionKindSpec)

    def _describe(self, plugin_name: str) -> str:
        info = self._infos.get(plugin_name)
        if info is None:
            return plugin_name
        return f"{plugin_name} ({info.distribution} {info.version})"

    def _pick(
        self, kind: str, table: dict[str, tuple[str, Any]], name: str, unknown: type[PluginError] = PluginError
    ) -> Any:
        if name in table:
            return table[name][1]
        choices = ", ".join(f"{n} (from {self._describe(p)})" for n, (p, _) in sorted(table.items())) or "none"
        raise unknown(f"unknown {kind} {name!r}; choose one of: {choices}")

    # -- typed access to the hooks -------------------------------------------------------------------

    def transport_specs(self, config: Any) -> dict[str, TransportSpec]:
        """Every transport on offer for ``config``, by name; raises ``PluginError`` on duplicate names.

        Transports depend on the profiles in ``config``, so the caller keeps the table (``TransportRegistry``).
        """
        table = self._name_table("transport", "svc_transports", TransportSpec, config=config)
        return {name: rec for name, (_, rec) in table.items()}

    def transport_spec(self, name: str, config: Any) -> TransportSpec:
        """One transport by name; an unknown name (``UnknownTransportError``) lists the choices and who provides
        them."""
        table = self._name_table("transport", "svc_transports", TransportSpec, config=config)
        spec: TransportSpec = self._pick("transport", table, name, UnknownTransportError)
        return spec

    def held_transport_names(self) -> dict[str, str]:
        """The transport names plugins offer whatever the SSH profiles are (``local``, a site's), each with the
        plugin that holds it: a new profile may not take one (``ProfileStore(held_names=...)``)."""
        from svc_host.domain.profiles import HostConfig

        records = self._records("svc_transports", TransportSpec, config=HostConfig())
        return {record.name: self._describe(plugin_name) for plugin_name, record in records}

    def sync_backends(self) -> dict[str, SyncBackendSpec]:
        return {
            n: rec for n, (_, rec) in self._cached_table("sync backend", "svc_sync_backends", SyncBackendSpec).items()
        }

    def sync_backend(self, name: str) -> SyncBackendSpec:
        table = self._cached_table("sync backend", "svc_sync_backends", SyncBackendSpec)
        spec: SyncBackendSpec = self._pick("sync backend", table, name)
        return spec

    def renderers(self) -> dict[str, RendererSpec]:
        return {n: rec for n, (_, rec) in self._cached_table("renderer", "svc_renderers", RendererSpec).items()}

    def renderer(self, name: str = "default") -> RendererSpec:
        spec: RendererSpec = self._pick("renderer", self._cached_table("renderer", "svc_renderers", RendererSpec), name)
        return spec

    def session_kinds(self) -> dict[str, SessionKindSpec]:
        """Every kind of interactive session on offer, by name; a duplicate name raises ``PluginError``."""
        table = self._cached_table("session kind", "svc_session_kinds", SessionKindSpec)
        return {n: rec for n, (_, rec) in table.items()}

    def session_kind(self, name: str) -> SessionKindSpec:
        """One kind by name; an unknown name lists the kinds on offer and who provides them."""
        table = self._cached_table("session kind", "svc_session_kinds", SessionKindSpec)
        spec: SessionKindSpec = self._pick("session kind", table, name)
        return spec

    def mcp_tools(self) -> dict[str, ToolSpec]:
        return {n: rec for n, (_, rec) in self._cached_table("MCP tool", "svc_mcp_tools", ToolSpec).items()}

    def routers(self) -> list[Any]:
        """Every plugin's FastAPI routers (checked to be ``APIRouter``), in pluggy's calling order."""
        from fastapi import APIRouter

        return [router for _, router in self._records("svc_api_routers", APIRouter)]

    def cli_commands(self) -> dict[str, click.Command]:
        """Every plugin's ``svc`` subcommands by name; a duplicate name raises ``PluginError``."""
        import click

        providers: dict[str, list[str]] = {}
        table: dict[str, click.Command] = {}
        for plugin_name, command in self._records("svc_cli_commands", click.Command):
            name = command.name or ""
            providers.setdefault(name, []).append(plugin_name)
            table[name] = command
        self._refuse_duplicates("CLI command", providers)
        return table

    def settings_models(self) -> dict[str, type[BaseModel]]:
        """The settings model each plugin declares (``svc_settings``), by plugin name: its section's name."""
        from pydantic import BaseModel

        out: dict[str, type[BaseModel]] = {}
        for plugin_name, model in self._call_each("svc_settings"):
            if model is None:
                continue
            if isinstance(model, type) and issubclass(model, BaseModel):
                out[plugin_name] = model
            else:
                self._hook_failed(plugin_name, "svc_settings", f"returned {model!r:.60}, expected a pydantic model")
        return out

    def background_tasks(self, host: PluginHost) -> list[TaskSpec]:
        """The long-running tasks plugins want a server to run for ``host``."""
        return [task for _, task in self._records("svc_background_tasks", TaskSpec, host=host)]

    def health(self, paths: SvcPaths) -> dict[str, HealthReport]:
        """Each plugin's own account of its health, by plugin name (plugins with nothing to say are left out)."""
        out: dict[str, HealthReport] = {}
        for plugin_name, report in self._call_each("svc_health", paths=paths):
            if isinstance(report, HealthReport):
                out[plugin_name] = report
            else:
                self._hook_failed(plugin_name, "svc_health", f"returned {type(report).__name__}, expected HealthReport")
        return out

    def emit(self, event: Event, host: PluginHost | None = None) -> None:
        """Broadcast an event (with the ``host`` of the process that made it, for observers that declare it); a
        failing observer is logged and neither the others nor the caller notice."""
        try:
            providers = self._call_plan("svc_event")
        except Exception:  # the broadcast must never raise into the monitor or the engine
            log.exception("could not dispatch %s", event.name)
            return
        for plugin_name, others in providers:
            try:
                self._pm.subset_hook_caller("svc_event", remove_plugins=others)(event=event, host=host)
            except Exception:
                log.exception("plugin %s failed handling %s", plugin_name, event.name)

    def pieces(self, config: Any, host: PluginHost | None) -> dict[str, dict[str, list[str]]]:
        """What each plugin offers, by plugin name and kind (``transports``, ``renderers``, ``routes``...): every
        collect hook called once, as ``svc plugins`` shows it (``svc_background_tasks`` only with a ``host``).

        A hook that raises or returns something other than its records marks its plugin ``failed`` with the
        reason (``PluginInfo.error``), as a real use would; duplicate names are not refused here (a host refuses
        them at start), so one conflict hides nothing else.
        """
        from fastapi import APIRouter

        out: dict[str, dict[str, list[str]]] = {}

        def add(plugin_name: str, kind: str, name: str) -> None:
            out.setdefault(plugin_name, {}).setdefault(kind, []).append(name)

        named: list[tuple[str, str, type[Any], dict[str, Any]]] = [
            ("transports", "svc_transports", TransportSpec, {"config": config}),
            ("sync_backends", "svc_sync_backends", SyncBackendSpec, {}),
            ("renderers", "svc_renderers", RendererSpec, {}),
            ("mcp_tools", "svc_mcp_tools", ToolSpec, {}),
            ("session_kinds", "svc_session_kinds", SessionKindSpec, {}),
        ]
        if host is not None:
            named.append(("background_tasks", "svc_background_tasks", TaskSpec, {"host": host}))
        for kind, hook_name, record_type, kwargs in named:
            for plugin_name, record in self._records(hook_name, record_type, **kwargs):
                add(plugin_name, kind, record.name)
        for plugin_name, router in self._records("svc_api_routers", APIRouter):
            for route in router.routes:
                methods = sorted(getattr(route, "methods", None) or [])
                add(plugin_name, "routes", " ".join([*methods, getattr(route, "path", repr(route))]))
        import click

        for plugin_name, command in self._records("svc_cli_commands", click.Command):
            add(plugin_name, "cli_commands", command.name or "")
        for plugin_name, model in self.settings_models().items():
            add(plugin_name, "settings", f"plugins.{plugin_name} ({model.__name__})")
        return out

    def _call_plan(self, hook_name: str) -> list[tuple[str, list[object]]]:
        """For each implementing plugin, in pluggy's order: its name and the plugins to leave out of its call
        (every other implementer except those that only wrap the hook, so wrappers see every call)."""
        caller = getattr(self._pm.hook, hook_name)
        impls = caller.get_hookimpls()
        wrappers = {impl.plugin for impl in impls if impl.hookwrapper or impl.wrapper}
        providers = [impl for impl in reversed(impls) if not (impl.hookwrapper or impl.wrapper)]
        return [
            (impl.plugin_name, [o.plugin for o in providers if o is not impl and o.plugin not in wrappers])
            for impl in providers
        ]
