"""The dashboard's logins: a session id in a cookie bound to the port, one-time login codes, a brake on failures.

The browser never holds the API token. Logging in (the form's token, or a login link's one-time code) opens a
session: a random id the browser keeps in the HttpOnly cookie ``svc_session_<port>`` (``__Host-svc_session_<port>``
under HTTPS), and the server keeps as a
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
_MAX_CONFIRMED = 4096


HOST_ONLY_PREFIX = "__Host-"
"""Under HTTPS the cookie's name starts with this: browsers then keep it only if it is ``Secure``, ``Path=/`` and
has no ``Domain`` (so no other name of the site sets or reads it), and never let plain http overwrite it."""


def cookie_name(host_header: str | None, *, https: bool) -> str:
    """``svc_session_<port>`` (``__Host-svc_session_<port>`` under HTTPS): browsers send a host's cookies to every
    port of it, so two servers on one machine need two names, and a server accepts only its own. The name is also
    part of a session's key (``WebSessions``), so a session opened for one name is void under any other."""
    _, _, port = (host_header or "").rpartition(":")
    name = f"{SESSION_COOKIE}_{port}" if port.isdigit() else SESSION_COOKIE
    return HOST_ONLY_PREFIX + name if https else name


@dataclass
class FailureLimit:
    """At most ``failures`` failed logins in ``window`` seconds, whoever sent them; past that a wrong token or code
    is answered 429 (with ``Retry-After``) instead of 401.

    It counts the server's failures, not a client's: on one machine every user is 127.0.0.1, and an address a
    client writes itself (``X-Forwarded-For``) proves nothing, so a count per address either lets a neighbour lock
    the owner out or lets anyone dodge it. It never refuses the right token or a live login code: guessing is
    defeated by their length (a generated token is 256 random bits, a code 128), and the limit only tells a client
    that keeps failing to back off.
    """

    failures: int = MAX_FAILURES
    window: float = FAILURE_WINDOW
    clock: Callable[[], float] = time.monotonic
    _recent: deque[float] = field(default_factory=deque)

    def retry_after(self) -> int | None:
        """Seconds until a wrong attempt is answered 401 again, or None when it is now."""
        while self._recent and self._recent[0] <= self.clock() - self.window:
            self._recent.popleft()
        if len(self._recent) < self.failures:
            return None
        return max(1, math.ceil(self._recent[0] + self.window - self.clock()))

    def failed(self) -> None:
        self._recent.append(self.clock())
        while len(self._recent) > self.failures:  # bounded memory: the oldest beyond the limit decide nothing
            self._recent.popleft()


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
    _watchers: dict[str, set[Callable[[], None]]] = field(default_factory=dict)
    """Session key -> what to call when this server logs it out (the session's open event streams end)."""

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
            for ended in self._watchers.pop(key, set()):
                ended()

    def on_close(self, session_id: str, cookie: str, ended: Callable[[], None]) -> Callable[[], None]:
        """Call ``ended`` when this server logs the session out; returns the undo. An event stream opened with the
        session ends at its logout, not at its next read (a logout elsewhere, or the end of the session's
        lifetime, is noticed by asking ``valid`` again)."""
        key = self._key("session", session_id, cookie)
        self._watchers.setdefault(key, set()).add(ended)

        def undo() -> None:
            watchers = self._watchers.get(key)
            if watchers is not None:
                watchers.discard(ended)
                if not watchers:
                    del self._watchers[key]

        return undo

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
