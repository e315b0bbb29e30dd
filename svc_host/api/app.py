"""FastAPI app factory. Routers come from ``svc_api_routers``; the ``SvcError`` family maps to ``{detail}``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from svc_host import __version__
from svc_host.api.errors import status_for
from svc_host.context import Host
from svc_host.errors import SvcError, describe_validation


def create_app(host: Host | None = None) -> FastAPI:
    """Build the REST app around a ``Host`` (one made from the environment by default)."""
    host = host or Host.create("web")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await host.start()
        yield
        await host.close()

    app = FastAPI(title="svc", version=__version__, lifespan=lifespan)
    app.state.host = host

    @app.exception_handler(SvcError)
    async def svc_error(_: Request, exc: SvcError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status_for(exc))

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": describe_validation(exc.errors())}, status_code=422)

    for router in host.plugins.routers():
        app.include_router(router)
    return app
