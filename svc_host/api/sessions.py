"""The dashboard's logins: a session id in a cookie bound to the port, one-time login codes, a limit on failures.

The browser never holds the API token. Logging in (the form's token, or a login link's one-time code) opens a
session: a random id the browser keeps in the HttpOnly cookie ``svc_session_<port>``, and the server keeps as a
keyed hash in the store (``web_secret``), so every ``svc serve`` on one store knows it and it outlives a restart.
The hash is keyed with the API token and names the cookie, so a session dies when the token changes and is not
valid under another port's cookie. Logging out deletes it; it expires after ``SESSION_LIFETIME`` anyway.

A session the store confirmed is trusted for ``SESSION_RECHECK`` seconds without asking it again (a request with
a session cookie then costs what one with the token does). Logging out through this server ends it here at once;
a logout through another server on the same store reaches this one within ``SESSION_RECHECK`` seconds.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from svc_host.store import web_secrets

if TYPE_CHECKING:
    from svc_host.store.database import Store

SESSION_COOKIE = "svc_session"
"""The cookie's name before its port: ``svc_session_8000``."""
LOGIN_QUERY = "login_code"
"""The query parameter of the login link ``svc serve`` prints: a one-time code, never the token."""
SESSION_LIFETIME = 30 * 24 * 3600
CODE_LIFETIME = 10 * 60
MAX_FAILURES = 10
FAILURE_WINDOW = 60.0
SESSION_RECHECK = 5.0
"""Seconds a session the store confirmed is trusted before the store is asked again."""
_MAX_SECRET_LENGTH = 128
_MAX_CLIENTS = 4096
_MAX_CONFIRMED = 4096


def cookie_name(host_header: str | None) -> str:
    """``svc_session_<port>``: browsers share cookies across ports, so two servers on one machine need two names."""
    _, _, port = (host_header or "").rpartition(":")
    return f"{SESSION_COOKIE}_{port}" if port.isdigit() else SESSION_COOKIE


@dataclass
class FailureLimit:
    """At most ``failures`` failed logins per client in ``window`` seconds; then every attempt waits."""

    failures: int = MAX_FAILURES
    window: float = FAILURE_WINDOW
    clock: Callable[[], float] = time.monotonic
    _seen: dict[str, deque[float]] = field(default_factory=dict)

    def retry_after(self, client: str) -> int | None:
        """Seconds until ``client`` may try again, or None when it may now."""
        recent = self._recent(client)
        if len(recent) < self.failures:
            return None
        return max(1, math.ceil(recent[0] + self.window - self.clock()))

    def failed(self, client: str) -> None:
        self._recent(client).append(self.clock())
        if len(self._seen) > _MAX_CLIENTS:  # bounded memory: forget clients whose failures aged out, else the oldest
            for name in [name for name in self._seen if not self._recent(name)] or [next(iter(self._seen))]:
                del self._seen[name]

    def _recent(self, client: str) -> deque[float]:
        recent = self._seen.setdefault(client, deque())
        while recent and recent[0] <= self.clock() - self.window:
            recent.popleft()
        return recent


@dataclass
class WebSessions:
    """Sessions and login codes of a server whose API token is ``token``, kept in ``store()``."""

    store: Callable[[], Store]
    token: str
    clock: Callable[[], float] = time.time
    limit: FailureLimit = field(default_factory=FailureLimit)
    _confirmed: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Session key -> (when the store confirmed it, when it expires), both by ``clock``."""
    _logouts: int = 0
    """Logouts so far: a confirmation that overlapped one is not kept (it may have read the session before)."""

    async def open(self, cookie: str) -> str:
        """A new session for the cookie named ``cookie``; returns its id (the cookie's value)."""
        session_id = secrets.token_urlsafe(32)
        now = int(self.clock())
        key = self._key("session", session_id, cookie)
        await self.store().run(web_secrets.add, key, "session", now + SESSION_LIFETIME, now)
        return session_id

    async def valid(self, session_id: str | None, cookie: str) -> bool:
        if not session_id or len(session_id) > _MAX_SECRET_LENGTH:
            return False
        key = self._key("session", session_id, cookie)
        now = self.clock()
        confirmed = self._confirmed.get(key)
        if confirmed is not None and confirmed[0] <= now < confirmed[0] + SESSION_RECHECK and now < confirmed[1]:
            return True
        logouts = self._logouts
        expires_at = await self.store().run(web_secrets.alive_until, key, "session", int(now))
        if expires_at is None:
            self._confirmed.pop(key, None)
            return False
        if logouts != self._logouts:
            return True
        if len(self._confirmed) >= _MAX_CONFIRMED:
            self._confirmed.clear()  # bounded memory: every session is asked about again once
        self._confirmed[key] = (now, expires_at)
        return True

    async def close(self, session_id: str | None, cookie: str) -> None:
        """Log a session out: its id stops working at once on this server, and within ``SESSION_RECHECK`` seconds
        on every other server of the store."""
        if session_id and len(session_id) <= _MAX_SECRET_LENGTH:
            key = self._key("session", session_id, cookie)
            self._logouts += 1
            self._confirmed.pop(key, None)
            await self.store().run(web_secrets.drop, key)
            self._logouts += 1

    def new_code(self) -> str:
        """A one-time login code, good for one exchange within ``CODE_LIFETIME`` (blocking: the store is written)."""
        code = secrets.token_urlsafe(16)
        now = int(self.clock())
        self.store().call(web_secrets.add, self._key("code", code), "code", now + CODE_LIFETIME, now)
        return code

    async def redeem(self, code: str | None) -> bool:
        """True once for a live code; it is gone afterwards, whoever asked."""
        if not code or len(code) > _MAX_SECRET_LENGTH:
            return False
        return await self.store().run(web_secrets.take, self._key("code", code), "code", int(self.clock()))

    def _key(self, kind: str, secret: str, bound_to: str = "") -> str:
        message = f"{kind}\0{bound_to}\0{secret}".encode(errors="surrogateescape")
        return hmac.new(self.token.encode(), message, hashlib.sha256).hexdigest()
