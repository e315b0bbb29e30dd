"""The plugin manager: host built-ins first, then entry points of group ``svc``, each loaded in isolation (a broken
or incompatible plugin is reported and skipped, or fatal in strict mode). What the loaded plugins offer is reached
through the typed methods it inherits from ``svc_host.plugin_core.hook_calls.PluginHooks``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

import pluggy

from svc_host.errors import PluginError
from svc_host.plugin_core.hook_calls import ENTRY_POINT_GROUP, PluginHooks, PluginInfo
from svc_host.plugin_core.identity import PROJECT
from svc_host.plugin_core.internal_imports import warn_internal_imports

log = logging.getLogger(__name__)

BUILTIN_MODULES: tuple[str, ...] = ("svc_host.rendering.hooks", "svc_host.api.hooks", "svc_host.mcp.hooks")

HOOKIMPL_MARK = f"{PROJECT}_impl"
"""The attribute pluggy's ``HookimplMarker`` sets on a function it marks."""


def _api_refusal(module: object) -> str | None:
    """Why a plugin whose module declares the plugin API range it supports (``SVC_PLUGIN_API``) is not loaded."""
    wanted = getattr(module, "SVC_PLUGIN_API", None)
    return None if wanted is None else _range_refusal(str(wanted))


def _entry_point_refusal(entry_point: EntryPoint) -> str | None:
    """Why a plugin is refused from the API range its entry point declares (``site = "svc_site:hooks
    [svc-api-1.2]"``, docs/plugins/api.md), read from the installed metadata before anything is imported. Python
    ignores the brackets when it loads the entry point (they are its "extras" field)."""
    from svc_host.plugin_core.api_range import entry_point_range
    from svc_host.plugin_core.identity import API_VERSION

    try:
        declared = entry_point_range(entry_point.value)
    except ValueError as exc:
        return str(exc)
    if declared is None or declared.admits(API_VERSION):
        return None
    return f"supports plugin API {declared.describe()}, and this svc offers plugin API {API_VERSION}"


def _range_refusal(wanted: str) -> str | None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from svc_host.plugin_core.identity import API_VERSION

    try:
        supported = SpecifierSet(wanted)
    except InvalidSpecifier:
        return f"SVC_PLUGIN_API {wanted!r} is not a version range (write e.g. '>=1.0,<2')"
    if API_VERSION not in supported:
        return f"supports plugin API {wanted}, and this svc offers plugin API {API_VERSION}"
    return None


class PluginManager(PluginHooks):
    """A loaded set of plugins and typed access to what they offer (``PluginHooks``)."""

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
        refusal = _entry_point_refusal(entry_point) if entry_point is not None else None
        if refusal is not None:  # refused from its metadata: the module is never imported
            info.status, info.error = "failed", f"{where}: {refusal}"
            self._report(info, key=info.name)
            return
        try:
            module = _hashable(load())
            refusal = _api_refusal(module) or self._hookless_refusal(module)
            if refusal is None:
                self._pm.register(module, name=info.name)
        except Exception as exc:  # noqa: BLE001 - any import-time failure of third-party code is reported
            refusal = f"{type(exc).__name__}: {exc}"
        if refusal is not None:
            info.status, info.error = "failed", f"{where}: {refusal}"
            self._report(info, key=info.name)
            return
        if info.distribution != "svc" and isinstance(module, ModuleType):  # svc's own are held by its tests
            warn_internal_imports(module.__name__.partition(".")[0])
        info.hooks = sorted(caller.name for caller in self._pm.get_hookcallers(module) or [])
        info.delivers = sorted(str(key) for key in getattr(module, "SVC_DELIVERS", ()))
        self._infos[info.name] = info
        self._tables.clear()

    def _hookless_refusal(self, plugin: object) -> str | None:
        """Why a plugin with no hook implementation is not loaded, or None. pluggy accepts such a plugin silently,
        and then it does nothing at all: a missing ``@hookimpl`` or hooks pluggy cannot see (a ``__getattr__``
        proxy, a property) would otherwise only show as a feature that is not there."""
        if any(self._pm.parse_hookimpl_opts(plugin, name) is not None for name in dir(plugin)):
            return None
        return "implements no svc hook (no function marked with svc_host.plugin's @hookimpl)"

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


class _Identified:
    """An unhashable plugin object (a ``SimpleNamespace`` in a test) seen through an identity-hashed proxy:
    pluggy keeps the plugins of a subset call in a set.

    The target's hook implementations are copied onto the proxy itself, since pluggy 1.7 finds hooks with
    ``inspect.getattr_static`` (which never reaches ``__getattr__``) and earlier versions with ``getattr``; other
    attributes (``SVC_PLUGIN_API``, ``SVC_DELIVERS``) are read through to the target.
    """

    def __init__(self, target: object) -> None:
        self._target = target
        for name in dir(target):
            value = getattr(target, name, None)
            if inspect.isroutine(value) and hasattr(value, HOOKIMPL_MARK):
                self.__dict__[name] = value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    def __dir__(self) -> list[str]:
        return dir(self._target)

    def __repr__(self) -> str:
        return repr(self._target)


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
