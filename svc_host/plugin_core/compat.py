"""What keeps a plugin written against an earlier documented API working for one more release.

Two things changed with plugin API 1.0 (svc 0.2), and both keep working, with a ``DeprecationWarning`` that names
the new form, until svc 0.3:

- **Import paths.** Plugins imported svc's internal modules (``svc_host.transport``, ``svc_host.plugin_types``...),
  which moved when the host was redrawn in wings. Every old module path still imports the module at its new place
  (``install_module_aliases``); the public names are in ``svc_host.plugin``.
- **Keyword arguments added to methods plugins override.** svc passes a new optional keyword argument (``run(...,
  idempotent=...)``) only to overrides that declare it, as pluggy does for hooks
  (``svc_host.transports.overrides``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType

REMOVED_IN = "svc 0.3"

MOVED_MODULES: Mapping[str, str] = {
    "svc_host.context": "svc_host.host",
    "svc_host.hookspecs": "svc_host.plugin_core.specs",
    "svc_host.plugins": "svc_host.plugin_core.manager",
    "svc_host.plugin_types": "svc_host.plugin_core.records",
    "svc_host.plugin_config": "svc_host.plugin_core.settings",
    "svc_host.plugin_tasks": "svc_host.plugin_core.tasks",
    "svc_host.transport": "svc_host.transports.base",
    "svc_host.transport_registry": "svc_host.runtime.transport_registry",
    "svc_host.processes": "svc_host.transports.processes",
    "svc_host.sync": "svc_host.transports.sync_backend",
    "svc_host.monitor": "svc_host.runtime.monitor",
    "svc_host.scheduler_snapshots": "svc_host.runtime.snapshots",
    "svc_host.resource_sampler": "svc_host.runtime.sampler",
    "svc_host.submit_throttle": "svc_host.runtime.throttle",
    "svc_host.leases": "svc_host.runtime.leases",
    "svc_host.events": "svc_host.runtime.events",
    "svc_host.changes": "svc_host.runtime.changes",
    "svc_host.single_flight": "svc_host.concurrency.single_flight",
    "svc_host.coalescing": "svc_host.concurrency.coalescing",
    "svc_host.jobs": "svc_host.services.jobs",
    "svc_host.pending": "svc_host.services.pending",
    "svc_host.efficiency_views": "svc_host.services.efficiency",
    "svc_host.change_wait": "svc_host.services.waits",
    "svc_host.site_limits": "svc_host.transports.site_limits",
    "svc_host.config": "svc_host.settings.config",
    "svc_host.profiles": "svc_host.settings.profiles",
    "svc_host.secrets": "svc_host.settings.secrets",
    "svc_host.mounts": "svc_host.settings.mounts",
    "svc_host.paths": "svc_host.settings.paths",
    "svc_host.files": "svc_host.settings.files",
    "svc_host.formatting": "svc_host.domain.times",
}
"""Module paths before plugin API 1.0 -> where the module lives now."""


class _Alias(importlib.abc.Loader):
    """Loads an old path as a module of its own that reads every name from the module at its new place.

    Returning the real module would let the import system set the real module's ``__spec__`` (and so its
    ``__name__`` for ``importlib.reload``, pickling by reference, ``python -m``) to the old path's."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{self.old} is deprecated and will be removed in {REMOVED_IN}: import public names from svc_host.plugin "
            f"(the module moved to {self.new}, which is internal)",
            DeprecationWarning,
            stacklevel=2,
        )
        return ModuleType(self.old, f"Deprecated: the names of {self.new} (internal), until {REMOVED_IN}.")

    def exec_module(self, module: ModuleType) -> None:
        real = importlib.import_module(self.new)

        def forwarded(name: str) -> object:
            return getattr(real, name)

        def names() -> list[str]:
            return dir(real)

        public = getattr(real, "__all__", [name for name in dir(real) if not name.startswith("_")])
        module.__dict__.update(__getattr__=forwarded, __dir__=names, __all__=list(public))


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        return None if new is None else importlib.machinery.ModuleSpec(fullname, _Alias(fullname, new))


def install_module_aliases() -> None:
    """Let the old module paths import (once per process)."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
