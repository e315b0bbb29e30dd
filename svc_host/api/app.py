"""FastAPI app factory. Routers come from ``svc_api_routers``; every error body is ``{detail}`` (a sync refusal
a flag overrides adds ``remedy``).

The ``SvcError`` family maps to its status codes; anything unexpected is logged with its traceback and
answered 500 with a detail that names no internals. ``SecurityMiddleware`` runs before every route.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse

from svc_host import __version__
from svc_host.api.errors import error_body, status_for
from svc_host.api.middleware import SecurityMiddleware
from svc_host.api.openapi_links import add_links
from svc_host.api.params import ErrorBody
from svc_host.api.routes import auth, docs
from svc_host.api.security import PUBLIC_API_PATHS, ServerSecurity
from svc_host.api.sessions import WebSessions
from svc_host.domain.validation_words import describe_validation, field_problems
from svc_host.errors import SvcError
from svc_host.host import Host
from svc_host.sessions import reach
from svc_host.settings.warnings import config_warnings

log = logging.getLogger("svc.api")

AUTH_DESCRIPTION = (
    "Every `/api` request needs the server's API token: send `Authorization: Bearer <token>`, with the "
    "token `svc serve` printed at start (or the value of `SVC_API_TOKEN`). In a browser, open the login "
    "link `svc serve` printed (its one-time code opens a session kept in an HttpOnly cookie), or log in with "
    "the token at `POST /api/auth/login`. "
    "Requests must name this server in `Host` (loopback names, or those given with `--allowed-host`). "
    "See docs/security.md."
)


def create_app(host: Host | None = None, *, security: ServerSecurity) -> FastAPI:
    """Build the REST app around a ``Host`` (one made from the environment by default)."""
    if host is None:
        host = Host.create("web")
        host.store  # noqa: B018 - opened before it listens: a bad SVC_DATABASE_URL is one line from `svc serve`

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await host.start()
        for warning in config_warnings(host.config(), host.plugins.delivered()):
            log.warning("%s", warning)
        yield
        await host.close()

    app = FastAPI(
        title="svc",
        version=__version__,
        lifespan=lifespan,
        description=AUTH_DESCRIPTION,
        docs_url=None,  # served from the installed package by routes.docs, not from a CDN
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    app.state.host = host
    app.state.security = security
    app.state.sessions = None if security.token is None else WebSessions(lambda: host.store, security.token)
    app.state.resolve_session = reach.resolver(host)  # the sessions' origin (svc serve's second port) asks these
    app.state.note_session_traffic = reach.note
    app.add_middleware(SecurityMiddleware, security=security, sessions=app.state.sessions)

    @app.exception_handler(SvcError)
    async def svc_error(_: Request, exc: SvcError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=status_for(exc))

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        return JSONResponse({"detail": describe_validation(errors), "errors": field_problems(errors)}, status_code=422)

    @app.exception_handler(Exception)
    async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return JSONResponse({"detail": "internal server error; the server log has the details"}, status_code=500)

    app.include_router(auth.router)
    app.include_router(docs.router)
    for router in host.plugins.routers():
        app.include_router(router)
    app.openapi = lambda: _openapi_with_auth(app, security)  # type: ignore[method-assign]
    return app


def _openapi_with_auth(app: FastAPI, security: ServerSecurity) -> dict[str, Any]:
    """The generated schema plus the Bearer scheme on every token-protected operation (and its 401), and the links
    from an operation's answer to the operations that take what it made (``openapi_links``)."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    _validation_as_error_body(schema)
    _middleware_refusals(schema)
    add_links(schema)
    if security.auth_required:
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        schemas.setdefault("ErrorBody", ErrorBody.model_json_schema())
        body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        unauthorized = {"description": "missing or wrong API token", "content": body}
        schema.setdefault("components", {}).setdefault("securitySchemes", {})["bearer"] = {
            "type": "http",
            "scheme": "bearer",
            "description": "The token `svc serve` printed, or SVC_API_TOKEN",
        }
        for path, operations in schema.get("paths", {}).items():
            if not path.startswith("/api/") or path in PUBLIC_API_PATHS:
                continue
            for operation in operations.values():
                operation["security"] = [{"bearer": []}]
                operation.setdefault("responses", {}).setdefault("401", unauthorized)
    app.openapi_schema = schema
    return schema


MIDDLEWARE_REFUSALS = {
    "400": "a `Host` this server does not answer to (every route), or invalid input",
    "403": "a request from another origin: a state change, or a read with the browser's login",
}
"""What ``SecurityMiddleware`` answers on every ``/api`` route before the route runs (docs/security.md)."""


def _middleware_refusals(schema: dict[str, Any]) -> None:
    """Declare the security middleware's answers (``MIDDLEWARE_REFUSALS``, and 413 for a body over the limit) on
    every ``/api`` operation, so a client reading the OpenAPI sees every status a route can answer."""
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for path, operations in schema.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            refusals = dict(MIDDLEWARE_REFUSALS)
            if "requestBody" in operation:
                refusals["413"] = "request body larger than the limit (SVC_MAX_BODY_BYTES)"
            for status, meaning in refusals.items():
                responses.setdefault(status, {"description": meaning, "content": body})


def _validation_as_error_body(schema: dict[str, Any]) -> None:
    """Declare FastAPI's 422 as what ``validation_error`` answers, ``ErrorBody`` (``{detail: string, errors}``),
    not FastAPI's own ``HTTPValidationError`` (``detail`` a list), which no route ever sends."""
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas.setdefault("ErrorBody", ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}"))
    for definition in schemas["ErrorBody"].pop("$defs", {}).items():
        schemas.setdefault(*definition)
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            refused = operation.get("responses", {}).get("422")
            if refused is not None and "HTTPValidationError" in str(refused.get("content", "")):
                refused["content"] = body
