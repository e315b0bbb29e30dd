"""The sessions' own origin: an ASGI app that serves every session under ``/s/<cluster>/<job id>/`` on a port of its
own, so a notebook's scripts never run on the dashboard's origin (whose API refuses them, ``api/middleware.py``).

Entry is ``/s/<cluster>/<job id>/<path>?svc_code=<code>``: a one-time code minted by ``mint_code`` (the dashboard's
API, ``svc session open``) becomes an HttpOnly, SameSite=Lax cookie for that session's path, and the browser is sent
to the same address without the code. Requests with the cookie are proxied (``proxy.py``) to the target
``resolve(cluster, job_id)`` names; the others get a page saying how to get in.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import Headers, QueryParams
from starlette.requests import cookie_parser
from starlette.types import Message, Receive, Scope, Send

from svc_host.sessions.entry import CookieSigner, EntryCodes, cookie_name, cookie_path
from svc_host.sessions.proxy import SessionProxy
from svc_host.sessions.target import SessionTarget

Resolve = Callable[[str, str], Awaitable[SessionTarget | None]]
CODE_QUERY = "svc_code"
COOKIE_LIFETIME = 12 * 3600
"""Seconds a session cookie is good for; a cookie past half its life is renewed on the next request."""
RESOLVE_TTL = 5.0
"""Seconds a resolved target is reused before ``resolve`` is asked again (not once per asset of a page)."""
_SESSION_PATH = re.compile(
    r"^/s/(?P<cluster>[A-Za-z0-9][A-Za-z0-9._-]{0,63})/(?P<job>[0-9]{1,20}(?:_[0-9]{1,10})?)(?P<rest>/.*)?$"
)


def session_of(path: str) -> tuple[str, str, str | None] | None:
    """(cluster, job id, rest of the path or None when the session's base path lacks its final slash)."""
    found = _SESSION_PATH.match(path)
    return (found["cluster"], found["job"], found["rest"]) if found else None


def _noop(cluster: str, job_id: str) -> None:
    pass


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def same_origin(scope: Scope, headers: Headers) -> bool:
    """Whether a request may reach a session as far as its ``Origin`` says: reads, and requests a browser sent from
    the sessions' own origin. A WebSocket or a state change whose ``Origin`` names another host or port is refused:
    the session's cookie is SameSite=Lax, which a browser still sends from every port of the same host (another
    local app's page could otherwise drive a session's app). Without ``Origin`` (not a browser's page) it passes."""
    if scope["type"] == "http" and scope.get("method", "GET") in SAFE_METHODS:
        return True
    origin = headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin.strip()).netloc.lower() == headers.get("host", "").lower()


class SessionsOrigin:
    """The ASGI app ``svc serve`` runs on its sessions port.

    ``resolve`` looks a session's target up (None: no such session, or not ready); ``host_allowed`` is the
    dashboard's Host rule (a page whose DNS name was rebound to 127.0.0.1 sends its own name); ``on_traffic``
    notes each session's proxied traffic for its idle timeout."""

    def __init__(
        self,
        resolve: Resolve,
        *,
        key: bytes,
        host_allowed: Callable[[str | None], bool],
        on_traffic: Callable[[str, str], None] = _noop,
        codes: EntryCodes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.resolve = resolve
        self.signer = CookieSigner(key)
        self.host_allowed = host_allowed
        self.on_traffic = on_traffic
        self.codes = codes if codes is not None else EntryCodes()
        self.clock = clock
        self._proxies: dict[tuple[str, str], tuple[SessionProxy, float]] = {}

    def mint_code(self, cluster: str, job_id: str) -> str:
        """A one-time code that opens this session in one browser within a minute (``?svc_code=``)."""
        return self.codes.mint(cluster, job_id)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        headers = Headers(scope=scope)
        if not self.host_allowed(headers.get("host")):
            await _page(scope, send, 400, "This server does not answer to that Host name (see docs/security.md).")
            return
        found = session_of(scope["path"])
        if found is None:
            await _page(scope, send, 404, "Nothing here: sessions are served under /s/<cluster>/<job id>/.")
            return
        cluster, job_id, rest = found
        query = QueryParams(scope.get("query_string", b""))
        if scope["type"] == "http" and (rest is None or CODE_QUERY in query):
            await self._enter(scope, send, cluster, job_id, query)
            return
        cookie = cookie_parser(headers.get("cookie", "")).get(cookie_name(cluster, job_id))
        expires = self.signer.expiry(cookie, cluster, job_id, self.clock())
        if expires is None or not same_origin(scope, headers):
            await _page(scope, send, *_refusal(cluster, job_id, entered=expires is not None))
            return
        proxy = await self._proxy(cluster, job_id)
        if proxy is None:
            await _page(scope, send, 404, f"Session {job_id} on {cluster} is not running (it ended, or is not ready).")
            return
        if scope["type"] == "http" and expires - self.clock() < COOKIE_LIFETIME / 2:
            send = self._with_cookie(scope, send, cluster, job_id)
        await proxy(scope, receive, send)

    async def _enter(self, scope: Scope, send: Send, cluster: str, job_id: str, query: QueryParams) -> None:
        """Trade a code for the session's cookie (or add the base path's final slash), then send the browser on."""
        rest = [(k, v) for k, v in query.multi_items() if k != CODE_QUERY]
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        path = raw.decode("latin-1") + ("/" if session_of(scope["path"]) == (cluster, job_id, None) else "")
        location = path + (f"?{urlencode(rest)}" if rest else "")
        cookie: list[tuple[bytes, bytes]] = []
        if CODE_QUERY in query:
            if self.codes.redeem(query.get(CODE_QUERY)) != (cluster, job_id):
                await _page(
                    scope,
                    send,
                    401,
                    "This link was used already, has expired (links are good once, for a minute) or is for another "
                    "session: open the session again from the dashboard or with `svc session open`.",
                )
                return
            cookie = [self._cookie(scope, cluster, job_id)]
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", location.encode()), (b"cache-control", b"no-store"), *cookie],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _cookie(self, scope: Scope, cluster: str, job_id: str) -> tuple[bytes, bytes]:
        expires = int(self.clock()) + COOKIE_LIFETIME
        value = self.signer.sign(cluster, job_id, expires)
        parts = [
            f"{cookie_name(cluster, job_id)}={value}",
            f"Path={cookie_path(cluster, job_id)}",
            f"Max-Age={COOKIE_LIFETIME}",
            "HttpOnly",
            "SameSite=Lax",
        ]
        if scope.get("scheme") in ("https", "wss"):
            parts.append("Secure")
        return b"set-cookie", "; ".join(parts).encode()

    def _with_cookie(self, scope: Scope, send: Send, cluster: str, job_id: str) -> Send:
        """``send`` with a renewed cookie on the response (a session used for longer than half its cookie's life)."""

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), self._cookie(scope, cluster, job_id)]}
            await send(message)

        return sending

    async def _proxy(self, cluster: str, job_id: str) -> SessionProxy | None:
        """The session's proxy, kept while its target stays the same (its idle connections are reused)."""
        key = (cluster, job_id)
        kept = self._proxies.get(key)
        now = time.monotonic()
        if kept is not None and now - kept[1] < RESOLVE_TTL:
            return kept[0]
        target = await self.resolve(cluster, job_id)
        if target is None:
            if kept is not None:
                del self._proxies[key]
                await kept[0].close()
            return None
        if kept is not None and (kept[0].target.endpoint, kept[0].target.secret) == (target.endpoint, target.secret):
            self._proxies[key] = (kept[0], now)
            return kept[0]
        if kept is not None:
            await kept[0].close()
        proxy = SessionProxy(target, lambda: self.on_traffic(cluster, job_id))
        self._proxies[key] = (proxy, now)
        return proxy

    async def close(self) -> None:
        proxies, self._proxies = self._proxies, {}
        for proxy, _ in proxies.values():
            await proxy.close()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _refusal(cluster: str, job_id: str, *, entered: bool) -> tuple[int, str]:
    """Why a request is not let in: no valid cookie (401), or another origin's page (403)."""
    if entered:
        return 403, (
            "Refused: a page of another origin (another port or site) may not change a session or open its "
            "WebSocket; use the session's own page."
        )
    return 401, (
        "This session needs you to open it from the dashboard, or with `svc session open "
        f"{job_id} --transport {cluster}` (a link is good once, for a minute)."
    )


async def _page(scope: Scope, send: Send, status: int, text: str) -> None:
    """A short page in words (HTTP), or the same words refusing a WebSocket handshake."""
    if scope["type"] == "websocket":
        if "websocket.http.response" in scope.get("extensions", {}):
            body = text.encode()
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
            await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})
        return
    body = (
        "<!doctype html><meta charset=utf-8><title>svc session</title>"
        f"<p style='font:16px system-ui;margin:3em auto;max-width:40em'>{html.escape(text)}</p>"
    ).encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
