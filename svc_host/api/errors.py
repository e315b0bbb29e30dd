"""The one place that maps the ``SvcError`` family to HTTP status codes."""

from __future__ import annotations

from svc_host.errors import (
    AuthenticationError,
    ConfigError,
    ConflictError,
    InvalidRequestError,
    InvalidStateError,
    NotConfiguredError,
    NotFoundError,
    PluginError,
    RenderError,
    StoreFullError,
    SvcError,
    SyncError,
    TransportError,
    WorkflowError,
)
from svc_host.settings.mounts import FileTooLargeError, PathForbiddenError

_STATUS: tuple[tuple[type[SvcError], int], ...] = (
    (AuthenticationError, 401),
    (NotFoundError, 404),
    (PathForbiddenError, 403),
    (FileTooLargeError, 413),
    (ConflictError, 409),
    (InvalidRequestError, 400),
    (InvalidStateError, 422),
    (ConfigError, 422),
    (WorkflowError, 422),
    (NotConfiguredError, 503),
    (TransportError, 502),
    (SyncError, 502),
    (RenderError, 500),
    (StoreFullError, 500),
    (PluginError, 503),
)


def status_for(exc: SvcError) -> int:
    """HTTP status of an expected failure; an unlisted kind is a bad request."""
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 400
