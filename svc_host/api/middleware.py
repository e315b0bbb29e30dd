"""The HTTP safety layer of ``svc serve``, run before any route: Host, Origin, token, body size.

A plain ASGI middleware (not Starlette's ``BaseHTTPMiddleware``) so that streamed responses such as the
dashboard's event stream pass through untouched. Refusals are ``{detail}`` bodies like every other error.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import Headers, QueryParams
from starlette.requests import cookie_parser
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svc_host.api.security import (
    PUBLIC_API_PATHS,
    SAFE_METHODS,
    TOKEN_COOKIE,
    TOKEN_QUERY,
    ServerSecurity,
    bearer_token,
)

COOKIE_MAX_AGE = 30 * 24 * 3600


def cookie_name(host_header: str | None) -> str:
    """``svc_token_<port>``: browsers share cookies across ports, so two servers on one machine need two names."""
    _, _, port = (host_header or "").rpartition(":")
    return f"{TOKEN_COOKIE}_{port}" if port.isdigit() else TOKEN_COOKIE


def set_token_cookie(response: Response, token: str, headers: Headers, *, secure: bool) -> None:
    """Give the browser the token as an HttpOnly, SameSite=Strict cookie (never readable by page scripts)."""
    response.set_cookie(
        cookie_name(headers.get("host")),
        token,
        max_age=COOKIE_MAX_AGE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=secure,
    )


def clear_token_cookie(response: Response, headers: Headers) -> None:
    response.delete_cookie(cookie_name(headers.get("host")), path="/", httponly=True, samesite="strict")


def _refuse(status: int, detail: str, **headers: str) -> Response:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers or None)


class SecurityMiddleware:
    """Refuse what ``ServerSecurity`` does not allow; exchange a login link's token for the cookie."""

    def __init__(self, app: ASGIApp, security: ServerSecurity) -> None:
        self.app = app
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # svc serves no websockets; refuse rather than pass anything unchecked
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self._check(scope)
        if refusal is None:
            refusal, receive = await self._bounded_body(scope, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _check(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        host = headers.get("host")
        if not self.security.host_allowed(host):
            return _refuse(
                400,
                f"this server does not answer to Host {host!r}; "
                "add the name with `svc serve --allowed-host NAME` (docs/security.md)",
            )
        if scope["method"] not in SAFE_METHODS:
            refusal = self._check_origin(scope, headers)
            if refusal is not None:
                return refusal
        return self._check_token(scope, headers) if self.security.auth_required else None

    def _check_origin(self, scope: Scope, headers: Headers) -> Response | None:
        """A state change from a browser must come from this server's own pages (or a configured origin)."""
        origin = headers.get("origin")
        if origin is not None and not self.security.origin_allowed(
            origin, scheme=scope.get("scheme", "http"), host_header=headers.get("host", "")
        ):
            return _refuse(403, f"cross-origin request refused: Origin {origin!r} is not this server's")
        if headers.get("sec-fetch-site") == "cross-site":
            return _refuse(403, "cross-site request refused")
        return None

    def _check_token(self, scope: Scope, headers: Headers) -> Response | None:
        """The API, and every state change wherever a plugin mounted it, needs the token; reading the dashboard's
        pages and the docs does not (they hold no data)."""
        path: str = scope["path"]
        if path == "/api" or path.startswith("/api/") or scope["method"] not in SAFE_METHODS:
            if path in PUBLIC_API_PATHS or self._authenticated(headers):
                return None
            return _refuse(
                401,
                "authentication required: send `Authorization: Bearer <token>` with the token `svc serve` "
                "printed (or SVC_API_TOKEN), or open the login link in a browser",
                **{"WWW-Authenticate": "Bearer"},
            )
        query = QueryParams(scope.get("query_string", b""))
        if scope["method"] == "GET" and TOKEN_QUERY in query:
            return self._login_link(scope, headers, query)
        return None

    def _authenticated(self, headers: Headers) -> bool:
        presented = bearer_token(headers.get("authorization"))
        if presented is None:
            presented = cookie_parser(headers.get("cookie", "")).get(cookie_name(headers.get("host")))
        return self.security.token_valid(presented)

    def _login_link(self, scope: Scope, headers: Headers, query: QueryParams) -> Response:
        """``GET /page?token=T``: set the cookie and send the browser to the same page without the token,
        so the token is not left in the address bar, the history or a shared link."""
        valid = self.security.token_valid(query.get(TOKEN_QUERY))
        rest: list[tuple[str, Any]] = [(k, v) for k, v in query.multi_items() if k != TOKEN_QUERY]
        if not valid:
            rest.append(("login", "failed"))
        location = scope["path"] + (f"?{urlencode(rest)}" if rest else "")
        response = RedirectResponse(location, status_code=303, headers={"Cache-Control": "no-store"})
        if valid and self.security.token:
            set_token_cookie(response, self.security.token, headers, secure=scope.get("scheme") == "https")
        return response

    async def _bounded_body(self, scope: Scope, receive: Receive) -> tuple[Response | None, Receive]:
        """Refuse a body over the limit before any route reads it (413), by its length or as it arrives."""
        limit = self.security.max_body_bytes
        too_large = _refuse(413, f"request body larger than {limit} bytes")
        length = Headers(scope=scope).get("content-length")
        if length is not None:
            if not length.isdigit():
                return _refuse(400, "invalid Content-Length"), receive
            if int(length) > limit:
                return too_large, receive
        if scope["method"] in SAFE_METHODS:
            return None, receive
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away; let the app see it
                return None, _replay([message], receive)
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return too_large, receive
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return None, _replay([{"type": "http.request", "body": b"".join(chunks), "more_body": False}], receive)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands out the buffered messages, then waits on the client as before (disconnects)."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
