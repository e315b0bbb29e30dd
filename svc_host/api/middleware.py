"""The HTTP safety layer of ``svc serve``, run before any route: Host, Origin, token, body size.

A plain ASGI middleware (not Starlette's ``BaseHTTPMiddleware``) so that streamed responses such as the
dashboard's event stream pass through untouched. Refusals are ``{detail}`` bodies like every other error.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from starlette.datastructures import Headers, MutableHeaders, QueryParams
from starlette.requests import HTTPConnection, cookie_parser
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svc_host.api.security import PUBLIC_API_PATHS, SAFE_METHODS, TOKEN_QUERY, ServerSecurity, bearer_token
from svc_host.api.sessions import LOGIN_QUERY, SESSION_LIFETIME, WebSessions, cookie_name

_PATH_CHARACTERS = "/:@!$&'()*+,;=-._~"


def _https(request: HTTPConnection) -> bool:
    """The request came over HTTPS (uvicorn sets the scheme from a trusted proxy's ``X-Forwarded-Proto``)."""
    return request.scope.get("scheme") == "https"


def session_cookie(request: HTTPConnection) -> str:
    """The name of this server's session cookie as this request reaches it (its port, its scheme)."""
    return cookie_name(request.headers.get("host"), https=_https(request))


def set_session_cookie(response: Response, session_id: str, request: HTTPConnection) -> None:
    """Give the browser its session id as an HttpOnly, SameSite=Strict cookie (never readable by page scripts),
    host-only (no ``Domain``) on ``Path=/``; under HTTPS ``Secure``, as its ``__Host-`` name requires."""
    response.set_cookie(
        session_cookie(request),
        session_id,
        max_age=SESSION_LIFETIME,
        path="/",
        httponly=True,
        samesite="strict",
        secure=_https(request),
    )


def clear_session_cookie(response: Response, request: HTTPConnection) -> None:
    response.delete_cookie(session_cookie(request), path="/", httponly=True, samesite="strict", secure=_https(request))


def session_id(request: HTTPConnection) -> str | None:
    """The session id the browser sent in this server's cookie; a cookie of any other name is not looked at."""
    return cookie_parser(request.headers.get("cookie", "")).get(session_cookie(request))


def too_many_failures(seconds: int) -> Response:
    return _refuse(
        429,
        f"wrong token or login code, after too many failed logins; try again in {seconds} s",
        **{"Retry-After": str(seconds)},
    )


def same_origin_path(path: str) -> str:
    """``path`` as a redirect target that stays on this server: ``//evil.example/`` would leave it."""
    return "/" + quote(path, safe=_PATH_CHARACTERS).lstrip("/")


def _refuse(status: int, detail: str, **headers: str) -> Response:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers or None)


def _too_large(limit: int) -> Response:
    return _refuse(413, f"request body larger than {limit} bytes")


def _is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


async def authenticated(security: ServerSecurity, request: HTTPConnection, sessions: WebSessions) -> bool:
    """The request carries the token (``Authorization: Bearer``) or a live session cookie."""
    presented = bearer_token(request.headers.get("authorization"))
    if presented is not None:
        return security.token_valid(presented)
    return await sessions.valid(session_id(request), session_cookie(request))


class SecurityMiddleware:
    """Refuse what ``ServerSecurity`` does not allow; exchange a login link's one-time code for a session."""

    def __init__(self, app: ASGIApp, security: ServerSecurity, sessions: WebSessions | None) -> None:
        self.app = app
        self.security = security
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # svc serves no websockets; refuse rather than pass anything unchecked
            await send({"type": "websocket.close", "code": 1008})
            return
        if _is_api(scope["path"]):
            send = _not_stored(send)
        headers = Headers(scope=scope)
        refusal = await self._check(scope, headers)
        if refusal is None:
            refusal, receive = await self._bounded_body(scope, headers, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _check(self, scope: Scope, headers: Headers) -> Response | None:
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
        elif _is_api(scope["path"]) and bearer_token(headers.get("authorization")) is None:
            refusal = self._check_reading_origin(scope, headers)
            if refusal is not None:
                return refusal
        return await self._check_token(scope, headers, self.sessions) if self.sessions is not None else None

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

    def _check_reading_origin(self, scope: Scope, headers: Headers) -> Response | None:
        """Reading the API with the browser's login (its cookie) is for this server's own pages too: a page of
        another origin, such as an interactive session's on the next port (same site, so the cookie goes along),
        must not read the user's jobs with it. A page's fetch names its origin; a script or image load says only
        that it is not same-origin (``Sec-Fetch-Site``)."""
        if headers.get("origin") is not None:
            return self._check_origin(scope, headers)
        if headers.get("sec-fetch-site") in {"same-site", "cross-site"}:
            return _refuse(403, "request from another origin refused: the API answers this server's own pages")
        return None

    async def _check_token(self, scope: Scope, headers: Headers, sessions: WebSessions) -> Response | None:
        """The API, and every state change wherever a plugin mounted it, needs the token or a session; reading the
        dashboard's pages and the docs does not (they hold no data)."""
        path: str = scope["path"]
        if _is_api(path) or scope["method"] not in SAFE_METHODS:
            if path in PUBLIC_API_PATHS or await authenticated(self.security, HTTPConnection(scope), sessions):
                return None
            return _refuse(
                401,
                "authentication required: send `Authorization: Bearer <token>` with the token `svc serve` "
                "printed (or SVC_API_TOKEN), or open the login link in a browser",
                **{"WWW-Authenticate": "Bearer"},
            )
        query = QueryParams(scope.get("query_string", b""))
        if scope["method"] == "GET" and (LOGIN_QUERY in query or TOKEN_QUERY in query):
            return await _login_link(scope, headers, query, sessions)
        return None

    async def _bounded_body(self, scope: Scope, headers: Headers, receive: Receive) -> tuple[Response | None, Receive]:
        """Refuse a body over the limit before any route reads it (413), by its length or as it arrives."""
        limit = self.security.max_body_bytes
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return _refuse(400, "invalid Content-Length"), receive
            if int(length) > limit:
                return _too_large(limit), receive
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
                return _too_large(limit), receive
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return None, _replay([{"type": "http.request", "body": b"".join(chunks), "more_body": False}], receive)


async def _login_link(scope: Scope, headers: Headers, query: QueryParams, sessions: WebSessions) -> Response:
    """``GET /page?login_code=C``: exchange the one-time code for a session and send the browser to the same
    page of this server without it (a live code always does; a wrong one is 429 past the failure limit). A link
    with the token itself (``?token=``, before codes) logs nobody in: it lands on the login view, and the token
    leaves the address bar."""
    valid = await sessions.redeem(query.get(LOGIN_QUERY))
    rest: list[tuple[str, Any]] = [(k, v) for k, v in query.multi_items() if k not in {LOGIN_QUERY, TOKEN_QUERY}]
    if not valid:
        wait = sessions.limit.retry_after()
        sessions.limit.failed()
        if wait is not None:
            return too_many_failures(wait)
        rest.append(("login", "failed"))
    location = same_origin_path(scope["path"]) + (f"?{urlencode(rest)}" if rest else "")
    response = RedirectResponse(location, status_code=303, headers={"Cache-Control": "no-store"})
    if valid:
        request = HTTPConnection(scope)
        new_session = await sessions.open(session_cookie(request))
        set_session_cookie(response, new_session, request)
    return response


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands out the buffered messages, then waits on the client as before (disconnects)."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


def _not_stored(send: Send) -> Send:
    """API answers hold the user's data: no browser or proxy cache may keep them (unless the route said otherwise,
    as the event stream does)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            if "cache-control" not in headers:
                headers["Cache-Control"] = "no-store"
        await send(message)

    return sending
