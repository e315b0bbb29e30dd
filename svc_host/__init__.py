"""svc: a service that fronts Slurm GPU clusters (REST, MCP and CLI over one plugin host)."""

from __future__ import annotations

import pluggy

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("svc")
"""Marker for plugin hook implementations: ``@hookimpl def svc_transports(config): ...``."""

__all__ = ["__version__", "hookimpl"]
