"""svc: a service that fronts Slurm GPU clusters (REST, MCP and CLI over one plugin host).

Plugins import from ``svc_host.plugin`` (the public API); ``from svc_host import hookimpl`` keeps working.
"""

from __future__ import annotations

from svc_host.plugin_core.compat import install_module_aliases
from svc_host.plugin_core.identity import __version__, hookimpl

install_module_aliases()  # the module paths plugins imported before plugin API 1.0 keep working until svc 0.3

__all__ = ["__version__", "hookimpl"]
