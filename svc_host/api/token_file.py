"""The API token ``svc serve`` generates when ``SVC_API_TOKEN`` is not set: one per user, kept 0600.

The token outlives a restart so that the dashboard's cookie and a bookmarked login link keep working;
delete the file (or set ``SVC_API_TOKEN``) to change it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from pathlib import Path

from svc_host.errors import ConfigError

MIN_TOKEN_LENGTH = 16


def load_or_create_token(path: Path) -> str:
    """The token stored at ``path``, created (43 URL-safe characters, mode 0600) if there is none.

    Two servers starting at once agree on one token: the file is published with a hard link, which
    fails when another process got there first, and then that process's token is read.
    """
    if not path.exists():
        _publish(path, secrets.token_urlsafe(32))
    try:
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(0o600)  # a copied or restored file must not stay readable by others
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the API token file {path}: {exc.strerror}") from None
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(f"the API token in {path} is shorter than {MIN_TOKEN_LENGTH} characters; delete the file")
    return token


def _publish(path: Path, token: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ConfigError(f"cannot create the API token file {path}: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
