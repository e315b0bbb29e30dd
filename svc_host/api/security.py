"""Who may talk to ``svc serve``: the Host allow-list, the API token and the Origin rule, as pure decisions.

``svc serve`` runs commands on a cluster as the user who started it, so a request must prove three things
before any route runs: it was addressed to this server by a name the user trusts (a page whose DNS name was
rebound to 127.0.0.1 sends its own name in ``Host``), it carries the token (a Bearer header) or a dashboard
session (an HttpOnly cookie, ``sessions.py``), and, when it changes state from a browser, it comes from this
server's own origin. The middleware in ``middleware.py`` applies these; docs/security.md explains them to users.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

TOKEN_QUERY = "token"  # noqa: S105 (a query parameter name)
"""The query parameter of the login links of old versions, which carried the token: never accepted, always removed."""
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""Request bodies above this are refused with 413 before a route reads them (a 1 MB workflow fits, JSON-escaped)."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_API_PATHS = frozenset({"/api/auth/login", "/api/auth/logout", "/api/auth/session"})
"""API paths that answer without a token (logging in needs none; logging out ends the session the cookie names)."""


@dataclass(frozen=True)
class ServerSecurity:
    """What ``svc serve`` accepts. ``token=None`` turns authentication off (``--no-auth``, loopback only)."""

    token: str | None
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    allowed_origins: frozenset[str] = field(default_factory=frozenset)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    def __post_init__(self) -> None:
        if self.token is not None and len(self.token) < 16:
            raise ValueError("the API token must be at least 16 characters long")
        hosts = frozenset(name for name in (normalise_host(h) for h in self.allowed_hosts) if name)
        object.__setattr__(self, "allowed_hosts", hosts)
        object.__setattr__(self, "allowed_origins", frozenset(o.rstrip("/").lower() for o in self.allowed_origins))

    @property
    def auth_required(self) -> bool:
        return self.token is not None

    def host_allowed(self, host_header: str | None) -> bool:
        """True for a loopback name or a configured one, with or without a port."""
        name = host_name(host_header)
        return name is not None and (name in LOOPBACK_NAMES or name in self.allowed_hosts)

    def origin_allowed(self, origin: str, *, scheme: str, host_header: str) -> bool:
        """True when ``origin`` is this server's own (scheme and Host header) or a configured origin."""
        origin = origin.rstrip("/").lower()
        return origin == f"{scheme}://{host_header}".lower() or origin in self.allowed_origins

    def token_valid(self, presented: str | None) -> bool:
        """Constant-time comparison with the configured token; always False when auth is off."""
        if self.token is None or not presented:
            return False
        return hmac.compare_digest(presented.encode(errors="surrogateescape"), self.token.encode())


@functools.lru_cache(maxsize=256)
def host_name(host_header: str | None) -> str | None:
    """The lower-cased host name of a ``Host`` header without its port (``[::1]:8000`` -> ``::1``), or None.

    Kept for the last 256 headers: a server hears the same few names on every request."""
    if not host_header or any(ch.isspace() or ch in "/@?#\\" for ch in host_header):
        return None
    try:
        parsed = urlsplit(f"//{host_header}")
        name = parsed.hostname
        _ = parsed.port  # raises on a malformed port
    except ValueError:
        return None
    return name.lower() if name else None


def normalise_host(name: str) -> str | None:
    """A configured host name as ``host_name`` reports it (``Example.org:443`` -> ``example.org``)."""
    name = name.strip()
    if name.startswith("[") or name.count(":") <= 1:
        return host_name(name)
    return name.lower()  # a bare IPv6 address


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def is_loopback(bind_host: str) -> bool:
    """True when ``svc serve --host`` listens on loopback only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if bind_host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind_host.strip("[]")).is_loopback
    except ValueError:
        return False
