"""The one place that maps the ``SvcError`` family to HTTP status codes."""

from __future__ import annotations

from svc_host.errors import ConfigError, PluginError, RenderError, SvcError, TransportError

_STATUS: tuple[tuple[type[SvcError], int], ...] = (
    (TransportError, 502),
    (RenderError, 500),
    (ConfigError, 422),
    (PluginError, 503),
)


def status_for(exc: SvcError) -> int:
    """HTTP status of an expected failure; unlisted kinds are a bad request."""
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 400
