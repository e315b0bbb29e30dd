"""The plugin manager: host built-ins first, then entry points of group ``svc``, each loaded in isolation.

Application code goes through the typed methods of ``PluginManager`` (``pm.transport_specs(config)``,
``pm.renderer("default")``, ``pm.routers()``...), never through ``pm.hook`` directly.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal

import pluggy

from svc_host import hookspecs
from svc_host.errors import PluginError
from svc_host.plugin_types import Event, RendererSpec, SyncBackendSpec, ToolSpec, TransportSpec

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

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": self.hooks,
            "status": self.status,
            "error": self.error,
        }


class PluginManager:
    """A loaded set of plugins and typed access to what they offer."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self._pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self._pm.add_hookspecs(hookspecs)
        self._infos: dict[str, PluginInfo] = {}

    # -- loading -------------------------------------------------------------------------------------

    def load_builtins(
        self, modules: Iterable[str] = BUILTIN_MODULES, *, disabled: frozenset[str] = frozenset()
    ) -> None:
        """Register the host's own hook modules, the same way a plugin's would be."""
        from svc_host import __version__

        for module_name in modules:
            info = PluginInfo(name=module_name, distribution="svc", version=__version__)
            self._load(info, lambda module_name=module_name: importlib.import_module(module_name), disabled)

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
        load: Any,
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
        try:
            module = load()
            self._pm.register(module, name=info.name)
        except Exception as exc:  # noqa: BLE001 - any import-time failure of third-party code is reported
            where = f"entry point {entry_point.value!r}" if entry_point is not None else info.name
            info.status, info.error = "failed", f"{where}: {type(exc).__name__}: {exc}"
            self._report(info, key=info.name)
            return
        info.hooks = sorted(caller.name for caller in self._pm.get_hookcallers(module) or [])
        self._infos[info.name] = info

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

    # -- what is loaded ------------------------------------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, loaded or not, in load order."""
        return list(self._infos.values())

    # -- typed access to the hooks -------------------------------------------------------------------

    def _collect(self, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call one collect hook on every plugin separately, so a failure names its plugin."""
        caller = getattr(self._pm.hook, hook_name)
        out: list[tuple[str, Any]] = []
        for impl in reversed(caller.get_hookimpls()):  # registration order
            try:
                records = impl.function(**kwargs) or []
            except Exception as exc:
                if self.strict:
                    raise PluginError(f"plugin {impl.plugin_name} failed in {hook_name}: {exc}") from exc
                log.exception("plugin %s failed in %s", impl.plugin_name, hook_name)
                continue
            out.extend((impl.plugin_name, record) for record in records)
        return out

    def _by_name(self, kind: str, hook_name: str, **kwargs: Any) -> dict[str, tuple[str, Any]]:
        providers: dict[str, list[str]] = {}
        table: dict[str, tuple[str, Any]] = {}
        for plugin_name, record in self._collect(hook_name, **kwargs):
            providers.setdefault(record.name, []).append(self._describe(plugin_name))
            table[record.name] = (plugin_name, record)
        duplicates = {name: who for name, who in providers.items() if len(who) > 1}
        if duplicates:
            lines = "; ".join(f"{name!r} from {' and '.join(who)}" for name, who in sorted(duplicates.items()))
            raise PluginError(f"duplicate {kind} names: {lines}. Disable one with SVC_DISABLE_PLUGINS.")
        return table

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

    def transport_specs(self, config: Any) -> dict[str, TransportSpec]:
        """Every transport on offer, by name; raises ``PluginError`` on duplicate names."""
        return {name: rec for name, (_, rec) in self._by_name("transport", "svc_transports", config=config).items()}

    def transport_spec(self, name: str, config: Any) -> TransportSpec:
        """One transport by name; an unknown name lists the choices and who provides them."""
        spec: TransportSpec = self._pick("transport", self._by_name("transport", "svc_transports", config=config), name)
        return spec

    def sync_backends(self) -> dict[str, SyncBackendSpec]:
        return {name: rec for name, (_, rec) in self._by_name("sync backend", "svc_sync_backends").items()}

    def sync_backend(self, name: str) -> SyncBackendSpec:
        spec: SyncBackendSpec = self._pick("sync backend", self._by_name("sync backend", "svc_sync_backends"), name)
        return spec

    def renderers(self) -> dict[str, RendererSpec]:
        return {name: rec for name, (_, rec) in self._by_name("renderer", "svc_renderers").items()}

    def renderer(self, name: str = "default") -> RendererSpec:
        spec: RendererSpec = self._pick("renderer", self._by_name("renderer", "svc_renderers"), name)
        return spec

    def mcp_tools(self) -> dict[str, ToolSpec]:
        return {name: rec for name, (_, rec) in self._by_name("MCP tool", "svc_mcp_tools").items()}

    def routers(self) -> Sequence[Any]:
        return [router for _, router in self._collect("svc_api_routers")]

    def emit(self, event: Event) -> None:
        """Broadcast an event; a failing observer is logged and the others still see it."""
        for impl in reversed(self._pm.hook.svc_event.get_hookimpls()):
            try:
                impl.function(event=event)
            except Exception:
                log.exception("plugin %s failed handling %s", impl.plugin_name, event.name)


def disabled_from_env() -> frozenset[str]:
    """Plugin names listed in ``SVC_DISABLE_PLUGINS`` (comma separated)."""
    raw = os.environ.get("SVC_DISABLE_PLUGINS", "")
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


def create_plugin_manager(*, strict: bool = False, entry_points_too: bool = True) -> PluginManager:
    """Build a fresh manager: built-ins, then (optionally) entry points, then ``check_pending()``."""
    disabled = disabled_from_env()
    manager = PluginManager(strict=strict)
    manager.load_builtins(disabled=disabled)
    if entry_points_too:
        manager.load_entry_points(disabled=disabled)
    manager.check_pending()
    return manager


@functools.cache
def get_plugin_manager() -> PluginManager:
    """The process-wide manager, built on first use (``SVC_PLUGINS_STRICT=1`` makes load failures fatal)."""
    return create_plugin_manager(strict=os.environ.get("SVC_PLUGINS_STRICT", "") == "1")
