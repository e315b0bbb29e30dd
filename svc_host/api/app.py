"""FastAPI app factory. Routers come from ``svc_api_routers``; the ``SvcError`` family maps to ``{detail}``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from svc_host import __version__
from svc_host.api.errors import status_for
from svc_host.errors import SvcError
from svc_host.plugins import PluginManager, get_plugin_manager
from svc_host.transport_registry import TransportRegistry


def create_app(plugins: PluginManager | None = None) -> FastAPI:
    """Build the REST app around a plugin manager (the process-wide one by default)."""
    manager = plugins or get_plugin_manager()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await app.state.transports.close()

    app = FastAPI(title="svc", version=__version__, lifespan=lifespan)
    app.state.plugins = manager
    app.state.transports = TransportRegistry(manager)

    @app.exception_handler(SvcError)
    async def svc_error(_: Request, exc: SvcError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status_for(exc))

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _first_error(exc)}, status_code=422)

    for router in manager.routers():
        app.include_router(router)
    return app


def _first_error(exc: RequestValidationError) -> str:
    """One readable line per problem, e.g. ``body.name: Field required``."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ()))
        parts.append(f"{where}: {error.get('msg', 'invalid')}" if where else str(error.get("msg", "invalid")))
    return "; ".join(parts) or "invalid request"
