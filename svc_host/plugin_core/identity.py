"""svc's version and its pluggy markers: ``hookimpl`` marks a plugin's hook implementations, ``hookspec`` the host's
specifications (project name ``svc``, the entry-point group plugins register in)."""

from __future__ import annotations

import pluggy

__version__ = "0.2.0"

API_VERSION = "1.2.0"
"""The version of the public plugin API (``svc_host.plugin``), semver: docs/plugins/api.md."""

PROJECT = "svc"

hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marker for plugin hook implementations: ``@hookimpl def svc_transports(config): ...``."""

hookspec = pluggy.HookspecMarker(PROJECT)
