"""``/docs`` (Swagger UI) and ``/redoc``: the API's documentation, served from installed packages, never a CDN.

Swagger UI and ReDoc come from the ``fastapi-offline`` distribution (a pinned dependency), so what runs in the
page is the code pip installed, not whatever a CDN serves today. The pages load no inline script and answer under
the dashboard's Content-Security-Policy (scripts and connections to this server only).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from svc_host.api.routes.web import SECURITY_HEADERS, file_response
from svc_host.errors import NotFoundError

ASSETS = Path(str(files("fastapi_offline") / "static"))
ASSET_NAMES = frozenset({"swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"})

SWAGGER_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc API</title>
<link rel="icon" href="/static/favicon.svg">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/static/js/api-docs.js"></script>
</body>
</html>
"""

REDOC_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc API</title>
<link rel="icon" href="/static/favicon.svg">
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src="/docs/assets/redoc.standalone.js"></script>
</body>
</html>
"""

REDOC_HEADERS = {
    **SECURITY_HEADERS,
    # ReDoc's search runs in a web worker it builds from its own (already allowed) script
    "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"] + "; worker-src 'self' blob:",
}

router = APIRouter(include_in_schema=False)


@router.get("/docs")
def swagger_ui() -> HTMLResponse:
    """Swagger UI: every operation, with **Authorize** for the Bearer token."""
    return HTMLResponse(SWAGGER_PAGE, headers={"Cache-Control": "no-cache", **SECURITY_HEADERS})


@router.get("/redoc")
def redoc() -> HTMLResponse:
    """ReDoc: the same schema as one readable page."""
    return HTMLResponse(REDOC_PAGE, headers={"Cache-Control": "no-cache", **REDOC_HEADERS})


@router.get("/docs/assets/{name}")
def asset(request: Request, name: str) -> Response:
    """A file of Swagger UI or ReDoc, from the installed package."""
    if name not in ASSET_NAMES:
        raise NotFoundError(f"no API docs file /docs/assets/{name}")
    return file_response(request, ASSETS / name)
