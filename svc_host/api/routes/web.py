"""The dashboard: ``/static/...`` files from the ``svc`` distribution, and ``index.html`` for every other page path.

The dashboard routes in the browser (history API), so ``/jobs/42`` or ``/runs/<id>`` must answer the shell, which
then draws the page: every GET that is not the API, the API docs or a static file gets ``index.html``. The
exclusion lives in the path convertor's regex (not in the handler), so routes registered after this one, such
as a plugin's ``/api/...`` GET, are still reached.
"""

from __future__ import annotations

import hashlib
import mimetypes
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, Request, Response
from starlette.convertors import Convertor, register_url_convertor

from svc_host.errors import NotFoundError

STATIC_ROOT = (Path(__file__).resolve().parent.parent.parent / "web" / "static").resolve()

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}

# No build step means no content-hashed names: browsers revalidate every file (cheap 304s by ETag) so a new
# svc version is never mixed with cached modules of the old one.
STATIC_CACHE = "no-cache"
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
    ),
}


class PagePathConvertor(Convertor[str]):
    """Any path except the API (``api``), its docs (``docs``, ``redoc``, ``openapi.json``) and ``static``."""

    regex = r"(?!(?:api|docs|redoc|openapi\.json|static|favicon\.ico)(?:/|$)).*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("svc_page", PagePathConvertor())

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=256)
def _load(path: Path, mtime_ns: int) -> tuple[bytes, str]:
    """A static file's bytes and ETag, cached until the file changes (``mtime_ns`` is part of the key)."""
    data = path.read_bytes()
    return data, '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


def static_file(relative: str) -> Path:
    """The file under ``STATIC_ROOT`` named by ``relative``; 404 for anything else (``..``, symlinks out, dirs)."""
    candidate = (STATIC_ROOT / relative).resolve()
    if not candidate.is_relative_to(STATIC_ROOT) or not candidate.is_file():
        raise NotFoundError(f"no dashboard file /static/{relative}")
    return candidate


def file_response(request: Request, path: Path) -> Response:
    """``path`` with its ETag (a 304 when the browser has it), revalidated on each use, under the dashboard's CSP."""
    data, etag = _load(path, path.stat().st_mtime_ns)
    media_type = CONTENT_TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    headers = {"ETag": etag, "Cache-Control": STATIC_CACHE, **SECURITY_HEADERS}
    if etag in {tag.strip() for tag in request.headers.get("if-none-match", "").split(",")}:
        return Response(status_code=304, headers=headers)
    return Response(data, media_type=media_type, headers=headers)


@router.get("/static/{relative:path}")
def static(request: Request, relative: str) -> Response:
    """A dashboard file (JS module, CSS, icon)."""
    return file_response(request, static_file(relative))


@router.get("/{page:svc_page}")
def page(request: Request, page: str) -> Response:
    """The dashboard shell for any page path; the browser's router draws the page it names."""
    return file_response(request, static_file("index.html"))
