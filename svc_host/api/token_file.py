"""The API token ``svc serve`` generates when ``SVC_API_TOKEN`` is not set: one per user, kept 0600.

The token outlives a restart so that the dashboard's cookie and a bookmarked login link keep working;
delete the file (or set ``SVC_API_TOKEN``) to change it.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from svc_host.errors import ConfigError
from svc_host.settings.files import publish_once, read_private_text

MIN_TOKEN_LENGTH = 16


def load_or_create_token(path: Path) -> str:
    """The token stored at ``path``, created (43 URL-safe characters, mode 0600) if there is none.

    Two servers starting at once agree on one token: the file is published with a hard link, which
    fails when another process got there first, and then that process's token is read.
    """
    if not path.exists():
        publish_once(path, secrets.token_urlsafe(32), what="the API token file")
    token = read_private_text(path, what="the API token file")
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(f"the API token in {path} is shorter than {MIN_TOKEN_LENGTH} characters; delete the file")
    return token
