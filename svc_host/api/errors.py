"""The one place that maps the ``SvcError`` family to HTTP status codes and error bodies."""

from __future__ import annotations

from typing import Any

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


def error_body(exc: SvcError) -> dict[str, Any]:
    """``{detail}``, plus ``remedy`` (``force``/``adopt``) for a sync refusal that flag would let through and
    ``errors`` (``[{field, message}]``, in words) for a request checked field by field."""
    body: dict[str, Any] = {"detail": str(exc)}
    if isinstance(exc, SyncError) and exc.remedy is not None:
        body["remedy"] = exc.remedy
    if exc.fields:
        body["errors"] = exc.fields
    return body
