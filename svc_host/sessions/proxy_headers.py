"""Which headers cross the session proxy, each way: pure functions over ASGI/h11 header lists.

Toward the app: hop-by-hop headers stay on their hop, svc's own cookies (``svc_*`` and ``__Host-svc_*``: the
dashboard's login, under HTTPS too, the sessions' entry cookies) never leave svc, and the session's secret is
added after any header of that name the browser sent is removed. Toward the browser: hop-by-hop headers and
anything named like the secret are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

Headers = list[tuple[bytes, bytes]]

SECRET_HEADER = b"x-svc-session-secret"
OWN_COOKIE_PREFIXES = ("svc_", "__Host-svc_")
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"expect",  # the ASGI server already answered a 100-continue
    }
)
WEBSOCKET_HANDSHAKE = frozenset(
    {b"host", b"sec-websocket-key", b"sec-websocket-version", b"sec-websocket-extensions", b"sec-websocket-protocol"}
)
"""Headers the WebSocket client side (wsproto) writes itself for its own handshake with the app."""


def _named_by_connection(headers: Iterable[tuple[bytes, bytes]]) -> set[bytes]:
    """Headers a ``Connection`` header declares hop-by-hop (RFC 9110 7.6.1)."""
    return {
        token.strip().lower()
        for name, value in headers
        if name.lower() == b"connection"
        for token in value.split(b",")
        if token.strip()
    }


def without_own_cookies(cookie: bytes) -> bytes:
    """A ``Cookie`` header without svc's cookies (names starting ``svc_`` or ``__Host-svc_``); the others as they
    were."""
    kept = [
        part.strip()
        for part in cookie.split(b";")
        if part.strip() and not part.strip().decode("latin-1").startswith(OWN_COOKIE_PREFIXES)
    ]
    return b"; ".join(kept)


def to_app(
    headers: Iterable[tuple[bytes, bytes]], secret: str, extra: Mapping[str, str], *, websocket: bool
) -> Headers:
    """The request headers the app receives: the browser's, filtered, then the secret and ``extra`` (headers the
    session's kind adds, such as Jupyter's ``Authorization: token``), which replace any the browser sent.

    For an HTTP request a chunked body stays chunked (``Transfer-Encoding`` is hop-by-hop, but the body that
    follows needs a framing); a WebSocket handshake leaves its own headers to the client library."""
    headers = [(name.lower(), value) for name, value in headers]
    dropped = HOP_BY_HOP | _named_by_connection(headers) | {SECRET_HEADER}
    dropped |= {name.lower().encode("latin-1") for name in extra}
    if websocket:
        dropped |= WEBSOCKET_HANDSHAKE
    out: Headers = []
    for name, value in headers:
        if name in dropped:
            continue
        kept = without_own_cookies(value) if name == b"cookie" else value
        if kept:
            out.append((name, kept))
    if not websocket and _chunked(headers) and not any(name == b"content-length" for name, _ in out):
        out.append((b"transfer-encoding", b"chunked"))
    out.append((SECRET_HEADER, secret.encode("latin-1")))
    out.extend((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in extra.items())
    return out


def to_browser(headers: Iterable[tuple[bytes, bytes]]) -> Headers:
    """The response headers the browser receives: the app's, without hop-by-hop ones and without the secret."""
    headers = [(name.lower(), value) for name, value in headers]
    dropped = HOP_BY_HOP | _named_by_connection(headers) | {SECRET_HEADER}
    return [(name, value) for name, value in headers if name not in dropped]


def has_body(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request declares a body (a length above zero, or chunks)."""
    headers = list(headers)
    for name, value in headers:
        if name.lower() == b"content-length":
            return value.strip() not in (b"0", b"")
    return _chunked(headers)


def _chunked(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    return any(name.lower() == b"transfer-encoding" and value.strip() for name, value in headers)


def header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    """The first value of header ``name`` (lower case), or None."""
    return next((value for key, value in headers if key.lower() == name), None)
