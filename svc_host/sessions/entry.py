"""Getting into a session from the browser: one-time entry codes and the signed cookie they become.

The dashboard API (or ``svc session open``'s link) mints a code for one session; the sessions' origin trades it,
once and within a minute, for an HttpOnly cookie scoped to that session's path. The cookie's value is an expiry
and an HMAC over (cluster, job id, expiry) with a key kept in the state directory, so a cookie outlives a restart
of ``svc serve`` and a cookie for one session opens no other.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from svc_host.errors import ConfigError
from svc_host.settings.files import publish_once, read_private_text

CODE_LIFETIME = 60.0
KEY_FILE = "session-proxy-key"
KEY_BYTES = 32


@dataclass
class EntryCodes:
    """Codes kept in this process's memory: random, good for ``lifetime`` seconds, each redeemed once."""

    lifetime: float = CODE_LIFETIME
    clock: Callable[[], float] = time.monotonic
    _codes: dict[str, tuple[str, str, float]] = field(default_factory=dict)

    def mint(self, cluster: str, job_id: str) -> str:
        now = self.clock()
        self._codes = {code: held for code, held in self._codes.items() if held[2] > now}
        code = secrets.token_urlsafe(24)
        self._codes[code] = (cluster, job_id, now + self.lifetime)
        return code

    def redeem(self, code: str | None) -> tuple[str, str] | None:
        """The (cluster, job id) a live code was minted for, forgetting the code; None for anything else."""
        held = self._codes.pop(code, None) if code else None
        if held is None or held[2] <= self.clock():
            return None
        return held[0], held[1]


def cookie_name(cluster: str, job_id: str) -> str:
    return f"svc_s_{cluster}_{job_id}"


def cookie_path(cluster: str, job_id: str) -> str:
    return f"/s/{cluster}/{job_id}/"


@dataclass(frozen=True)
class CookieSigner:
    """Signs and checks session cookies: ``<expiry>.<HMAC-SHA256(key, cluster NUL job NUL expiry)>``."""

    key: bytes = field(repr=False)

    def _mac(self, cluster: str, job_id: str, expires: int) -> str:
        message = f"{cluster}\0{job_id}\0{expires}".encode()
        digest = hmac.new(self.key, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def sign(self, cluster: str, job_id: str, expires: int) -> str:
        return f"{expires}.{self._mac(cluster, job_id, expires)}"

    def expiry(self, value: str | None, cluster: str, job_id: str, now: float) -> int | None:
        """The expiry of a valid, unexpired cookie of this session; None otherwise."""
        if not value:
            return None
        expires, _, mac = value.partition(".")
        if not expires.isdigit() or int(expires) <= now:
            return None
        if not hmac.compare_digest(mac.encode(), self._mac(cluster, job_id, int(expires)).encode()):
            return None
        return int(expires)


def load_or_create_key(path: Path) -> bytes:
    """The signing key at ``path``, created (32 random bytes, hex, mode 0600) when missing; two servers starting
    at once agree on one (published with a hard link, as the API token file is)."""
    what = "the session proxy key"
    if not path.exists():
        publish_once(path, secrets.token_hex(KEY_BYTES), what=what)
    try:
        key = bytes.fromhex(read_private_text(path, what=what))
    except ValueError:
        key = b""
    if len(key) < KEY_BYTES:
        raise ConfigError(f"the session proxy key in {path} is damaged; delete the file (open sessions ask again)")
    return key
