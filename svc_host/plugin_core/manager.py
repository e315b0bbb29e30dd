"""The plugin manager: host built-ins first, then entry points of group ``svc``, each loaded in isolation.

Application code goes through the typed methods of ``PluginManager`` (``pm.transport_specs(config)``,
``pm.renderer("default")``, ``pm.routers()``...). Those methods call the hooks through pluggy
(``pm.hook.<name>``), once per implementing plugin via pluggy's subset hook callers: pluggy matches the
arguments (an implementation may take fewer than the spec), runs wrappers and traces the call, and a failure
or a wrong record is still pinned on the plugin that caused it. Name tables (renderers, sync backends, MCP
tools; transports per host config) are built once and cached: a duplicate name fails when the host starts.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Literal

import pluggy

from svc_host.errors import PluginError
from svc_host.plugin_core import specs as hookspecs
from svc_host.plugin_core.records import (
    Event,
    HealthReport,
    RendererSpec,
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
BUILTIN_MODULES: tuple[str, ...] = ("svc_host.rendering.hooks", "svc_host.api.hooks", "svc_host.mcp.hooks")

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


def _api_refusal(module: object) -> str | None:
    """Why a plugin that declares the plugin API range it supports (``SVC_PLUGIN_API``) is not loaded, or None."""
    wanted = getattr(module, "SVC_PLUGIN_API", None)
    if wanted is None:
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from svc_host.plugin_core.identity import API_VERSION

    try:
        supported = SpecifierSet(str(wanted))
    except InvalidSpecifier:
        return f"SVC_PLUGIN_API {wanted!r} is not a version range (write e.g. '>=1.0,<2')"
    if API_VERSION not in supported:
        return f"supports plugin API {wanted}, and this svc offers plugin API {API_VERSION}"
    return None


class PluginManager:
    """A loaded set of plugins and typed access to what they offer."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self._pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self._pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}
        self._tables: dict[str, dict[str, tuple[str, Any]]] = {}

    # -- loading -------------------------------------------------------------------------------------

    def load_builtins(
        self, modules: Iterable[str] = BUILTIN_MODULES, *, disabled: frozenset[str] = frozenset()
    ) -> None:
        """Register the host's own hook modules, the same way a plugin's would be."""
        from svc_host.plugin_core.identity import __version__

        for module_name in modules:
            info = PluginInfo(name=module_name, distribution="svc", version=__version__)
            self._load(info, functools.partial(importlib.import_module, module_name), disabled)

    def load_entry_points(self, *, disabled: frozenset[str] = frozenset()) -> None:
        """Register every module of entry-point group ``svc``; a broken one is reported and skipped."""
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            dist = ep.dist
            info = PluginInfo(
                name=ep.name,
                distribution=dist.name if dist is not None else "unknown",
                version=dist.version if dist is not None else "unknown",
            )
            self._load(info, ep.load, disabled, entry_point=ep)

    def register(self, plugin: object, name: str, *, distribution: str = "local", version: str = "0") -> None:
        """Register an already imported plugin object (tests, embedding applications)."""
        info = PluginInfo(name=name, distribution=distribution, version=version)
        self._load(info, lambda: plugin, frozenset())

    def _load(
        self,
        info: PluginInfo,
        load: Callable[[], Any],
        disabled: frozenset[str],
        entry_point: EntryPoint | None = None,
    ) -> None:
        if info.name in self._infos:
            other = self._infos[info.name]
            info.status, info.error = (
                "failed",
                (f"plugin name {info.name!r} is already taken by distribution {other.distribution} {other.version}"),
            )
            self._report(info, key=f"{info.name} ({info.distribution})")
            return
        if info.name in disabled:
            info.status = "disabled"
            self._infos[info.name] = info
            return
        where = f"entry point {entry_point.value!r}" if entry_point is not None else info.name
        try:
            module = _hashable(load())
            refusal = _api_refusal(module)
            if refusal is None:
                self._pm.register(module, name=info.name)
        except Exception as exc:  # noqa: BLE001 - any import-time failure of third-party code is reported
            refusal = f"{type(exc).__name__}: {exc}"
        if refusal is not None:
            info.status, info.error = "failed", f"{where}: {refusal}"
            self._report(info, key=info.name)
            return
        info.hooks = sorted(caller.name for caller in self._pm.get_hookcallers(module) or [])
        info.delivers = sorted(str(key) for key in getattr(module, "SVC_DELIVERS", ()))
        self._infos[info.name] = info
        self._tables.clear()

    def _report(self, info: PluginInfo, *, key: str) -> None:
        message = f"plugin {info.name} from {info.distribution} {info.version} failed to load: {info.error}"
        if self.strict:
            raise PluginError(message)
        log.warning("%s", message)
        self._infos[key] = info

    def check_pending(self) -> None:
        """Fail if a plugin implements a hook that does not exist (usually a typo in a hook name)."""
        try:
            self._pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin {exc.plugin!r} implements an unknown hook: {exc}") from exc

    def enable_tracing(self, write: Callable[[str], object]) -> Callable[[], None]:
        """Trace every hook call (pluggy's hook-call monitoring): which plugins it reaches, what came back."""

        def before(hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, object]) -> None:
            args = ", ".join(f"{key}={value!r:.80}" for key, value in kwargs.items())
            write(f"svc plugins: {hook_name}({args}) -> {', '.join(i.plugin_name for i in reversed(impls))}\n")

        def after(
            outcome: pluggy.Result[object],
            hook_name: str,
            impls: Sequence[pluggy.HookImpl],
            kwargs: Mapping[str, object],
        ) -> None:
            if outcome.exception is not None:
                write(f"svc plugins: {hook_name} raised {type(outcome.exception).__name__}: {outcome.exception}\n")
            else:
                write(f"svc plugins: {hook_name} returned {outcome.get_result()!r:.200}\n")

        return self._pm.add_hookcall_monitoring(before, after)

    # -- what is loaded ------------------------------------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, loaded or not, in load order."""
        return list(self._infos.values())

    def delivered(self) -> set[str]:
        """The configuration keys some loaded plugin delivers (``PluginInfo.delivers``)."""
        return {key for info in self._infos.values() if info.status == "ok" for key in info.delivers}

    def providers(self, hook_name: str) -> list[str]:
        """Plugins implementing ``hook_name`` in pluggy's calling order (tryfirst, newest first, trylast)."""
        return [plugin_name for plugin_name, _ in self._call_plan(hook_name)]

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
        """Build the renderer, sync backend and MCP tool tables now; a duplicate name raises ``PluginError``.

        ``Host.start()`` calls this so that a conflict stops a server at start, not its first submit.
        """
        self._cached_table("renderer", "svc_renderers", RendererSpec)
        self._cached_table("sync backend", "svc_sync_backends", SyncBackendSpec)
        self._cached_table("MCP tool", "svc_mcp_tools", ToolSpec)

    def _describe(self, plugin_name: str) -> str:
        info = self._infos.get(plugin_name)
        if info is None:
            return plugin_name
        return f"{plugin_name} ({info.distribution} {info.version})"

    def _pick(self, kind: str, table: dict[str, tuple[str, Any]], name: str) -> Any:
        if name in table:
            return table[name][1]
        choices = ", ".join(f"{n} (from {self._describe(p)})" for n, (p, _) in sorted(table.items())) or "none"
        raise PluginError(f"unknown {kind} {name!r}; choose one of: {choices}")

    # -- typed access to the hooks -------------------------------------------------------------------

    def transport_specs(self, config: Any) -> dict[str, TransportSpec]:
        """Every transport on offer for ``config``, by name; raises ``PluginError`` on duplicate names.

        Transports depend on the profiles in ``config``, so the caller keeps the table (``TransportRegistry``).
        """
        table = self._name_table("transport", "svc_transports", TransportSpec, config=config)
        return {name: rec for name, (_, rec) in table.items()}

    def transport_spec(self, name: str, config: Any) -> TransportSpec:
        """One transport by name; an unknown name lists the choices and who provides them."""
        spec: TransportSpec = self._pick(
            "transport", self._name_table("transport", "svc_transports", TransportSpec, config=config), name
        )
        return spec

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

    def emit(self, event: Event) -> None:
        """Broadcast an event; a failing observer is logged and neither the others nor the caller notice."""
        try:
            providers = self._call_plan("svc_event")
        except Exception:  # the broadcast must never raise into the monitor or the engine
            log.exception("could not dispatch %s", event.name)
            return
        for plugin_name, others in providers:
            try:
                self._pm.subset_hook_caller("svc_event", remove_plugins=others)(event=event)
            except Exception:
                log.exception("plugin %s failed handling %s", plugin_name, event.name)

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


class _Identified:
    """An unhashable plugin object (a ``SimpleNamespace`` in a test) seen through an identity-hashed proxy:
    pluggy keeps the plugins of a subset call in a set."""

    def __init__(self, target: object) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    def __dir__(self) -> list[str]:
        return dir(self._target)


def _hashable(plugin: object) -> object:
    try:
        hash(plugin)
    except TypeError:
        return _Identified(plugin)
    return plugin


def disabled_from_env() -> frozenset[str]:
    """Plugin names listed in ``SVC_DISABLE_PLUGINS`` (comma separated)."""
    raw = os.environ.get("SVC_DISABLE_PLUGINS", "")
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


def create_plugin_manager(*, strict: bool = False, entry_points_too: bool = True) -> PluginManager:
    """Build a fresh manager: built-ins, then (optionally) entry points, then ``check_pending()``.

    ``SVC_TRACE_PLUGINS=1`` traces every hook call to stderr.
    """
    disabled = disabled_from_env()
    manager = PluginManager(strict=strict)
    if os.environ.get("SVC_TRACE_PLUGINS", "") == "1":
        manager.enable_tracing(sys.stderr.write)
    manager.load_builtins(disabled=disabled)
    if entry_points_too:
        manager.load_entry_points(disabled=disabled)
    manager.check_pending()
    return manager


@functools.cache
def get_plugin_manager() -> PluginManager:
    """The process-wide manager, built on first use (``SVC_PLUGINS_STRICT=1`` makes load failures fatal)."""
    return create_plugin_manager(strict=os.environ.get("SVC_PLUGINS_STRICT", "") == "1")
