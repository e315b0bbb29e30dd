"""The one masking of secret values for everything svc shows: REST, MCP and the CLI.

Job and SSH profile environment variables and the chat webhook URL are shown as ``<redacted>``, whatever
they hold (they are where API tokens live); a server variable is redacted when its name or its value looks
secret. A configuration or profile sent back with ``<redacted>`` values (a dashboard saving what it was
shown) keeps the stored values: see :func:`keep_redacted` and :func:`keep_redacted_values`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

REDACTED = "<redacted>"

SECRET_PREFIXES = ("SVC_ENVIRONMENT__ENV_VARS",)
"""Variables whose whole value is redacted: job environment variables often carry API tokens."""

_SECRET_NAME_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASS", "WEBHOOK", "CREDENTIAL", "AUTH")
_SECRET_VALUE = re.compile(r"^(xox[abposr]-|gh[pousr]_|github_pat_|sk-|AKIA)|hooks?[./]|webhook", re.IGNORECASE)
_URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def mask_env_value(name: str, value: str) -> str:
    """``<redacted>`` for keys, tokens, passwords, webhooks and URLs with credentials; the value otherwise.

    ``SVC_API_TOKEN`` (the server's own token) is redacted by its name like every ``*TOKEN*`` variable.
    """
    upper = name.upper()
    if upper.startswith(SECRET_PREFIXES) or any(word in upper for word in _SECRET_NAME_WORDS):
        return REDACTED
    if _SECRET_VALUE.search(value):
        return REDACTED
    return _mask_url(value)


def _mask_url(value: str) -> str:
    """A URL with a user, a password or a query as ``<scheme>://<redacted>``; other values as they are.

    A password holding an unencoded ``/``, ``?`` or ``#`` ends the parsed host part early
    (``postgresql://u:pa/ss@db/x`` parses as host ``u:pa``), so any ``@`` after the scheme masks the whole rest too.
    """
    scheme = _URL_SCHEME.match(value)
    try:
        parts = urlsplit(value)
    except ValueError:
        return f"{scheme.group(1)}://{REDACTED}" if scheme else REDACTED
    if not parts.scheme:
        return value
    credentials = parts.username or parts.password or "@" in parts.netloc or parts.query
    if credentials or (scheme and "@" in value[scheme.end() :]):
        return f"{scheme.group(1)}://{REDACTED}" if scheme else REDACTED
    return value


def mask_values(env_vars: Mapping[str, Any]) -> dict[str, str]:
    """Every value of a set of environment variables (a job's, a profile's) as ``<redacted>``."""
    return dict.fromkeys(env_vars, REDACTED)


def keep_redacted_values(env_vars: Mapping[str, Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    """``env_vars`` with each ``<redacted>`` value replaced by the stored one (dropped when none is stored)."""
    return {
        name: stored[name] if value == REDACTED else value
        for name, value in env_vars.items()
        if value != REDACTED or name in stored
    }


def mask_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A (partial) configuration as JSON with every job env var value and the webhook URL redacted."""
    masked = dict(config)
    environment = masked.get("environment")
    if isinstance(environment, Mapping) and isinstance(environment.get("env_vars"), Mapping):
        masked["environment"] = {**environment, "env_vars": mask_values(environment["env_vars"])}
    notifications = masked.get("notifications")
    if isinstance(notifications, Mapping) and notifications.get("chat_webhook_url"):
        masked["notifications"] = {**notifications, "chat_webhook_url": REDACTED}
    return masked


def keep_redacted(partial: Mapping[str, Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    """``partial`` with every ``<redacted>`` secret replaced by the value ``stored`` holds (or dropped when
    ``stored`` has none), so saving a configuration that was shown masked never writes ``<redacted>``."""
    result = dict(partial)
    environment = result.get("environment")
    if isinstance(environment, Mapping) and isinstance(environment.get("env_vars"), Mapping):
        known = _section(stored, "environment").get("env_vars")
        env_vars = keep_redacted_values(environment["env_vars"], known if isinstance(known, Mapping) else {})
        result["environment"] = {**environment, "env_vars": env_vars}
    notifications = result.get("notifications")
    if isinstance(notifications, Mapping) and notifications.get("chat_webhook_url") == REDACTED:
        kept = {key: value for key, value in notifications.items() if key != "chat_webhook_url"}
        stored_url = _section(stored, "notifications").get("chat_webhook_url")
        if stored_url is not None:
            kept["chat_webhook_url"] = stored_url
        result["notifications"] = kept
    return result


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    section = data.get(name)
    return section if isinstance(section, Mapping) else {}


class RedactQueryFilter(logging.Filter):
    """Keeps the values of the named query parameters out of a log: ``svc serve`` puts one on uvicorn's access log
    for login links (``GET /?login_code=<redacted>``) and one for a session's entry codes (``?svc_code=``)."""

    def __init__(self, *names: str) -> None:
        super().__init__()
        self._value = re.compile(rf"([?&](?:{'|'.join(map(re.escape, names))})=)[^&\s]*")

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and any(isinstance(arg, str) and "=" in arg for arg in args):
            record.args = tuple(self._value.sub(r"\1<redacted>", arg) if isinstance(arg, str) else arg for arg in args)
        return True
