"""What the chat plugin reads from svc's config (``plugins.chat``, ``notifications.chat_webhook_url``) and the
environment, validated once per use."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from svc_host.plugin import ConfigError

from svc_plugin_chat.rules import DEFAULT_RULES, Rule, parse_rules

ChatFormat = Literal["slack", "mattermost", "discord", "teams"]
FORMATS: tuple[str, ...] = get_args(ChatFormat)


class ChatConfig(BaseModel):
    """The section ``plugins.chat`` of svc's configuration (``svc config set plugins.chat.format teams``).

    A ``SVC_CHAT_*`` variable that is set wins over its field (``SVC_CHAT_FORMAT`` over ``format``...).
    ``events`` takes the rules of ``SVC_CHAT_EVENTS`` (see ``rules``).
    """

    model_config = ConfigDict(extra="forbid")

    format: ChatFormat | None = None
    events: str | None = Field(default=None, max_length=2000)
    allow_http_hosts: list[str] = Field(default_factory=list)
    retry_seconds: float = Field(default=5.0, gt=0, le=86400)
    retry_max_seconds: float = Field(default=300.0, gt=0, le=86400)
    timeout_seconds: float = Field(default=10.0, gt=0, le=86400)

    @field_validator("events")
    @classmethod
    def _rules(cls, value: str | None) -> str | None:
        if value:
            try:
                parse_rules(value)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return value


@dataclass(frozen=True)
class ChatSettings:
    """``url`` is ``notifications.chat_webhook_url`` (any config layer), else ``CHAT_WEBHOOK_URL``.

    ``SVC_CHAT_FORMAT`` forces a payload shape (else chosen by URL), ``SVC_CHAT_EVENTS`` says which changes
    notify (see ``rules``), ``SVC_CHAT_ALLOW_HTTP_HOSTS`` lists hosts that may be reached over plain http,
    ``SVC_CHAT_RETRY_SECONDS`` is the first retry delay (doubling up to ``SVC_CHAT_RETRY_MAX_SECONDS``).
    """

    url: str | None
    format: ChatFormat | None = None
    rules: tuple[Rule, ...] = DEFAULT_RULES
    allow_http_hosts: frozenset[str] = frozenset()
    retry_seconds: float = 5.0
    retry_max_seconds: float = 300.0
    timeout_seconds: float = 10.0

    @classmethod
    def from_env(
        cls, config_url: str | None, env: Mapping[str, str] | None = None, section: ChatConfig | None = None
    ) -> ChatSettings:
        """The settings from ``section`` (``plugins.chat``), each ``SVC_CHAT_*`` variable that is set winning."""
        env = os.environ if env is None else env
        section = section or ChatConfig()
        chosen = (env.get("SVC_CHAT_FORMAT") or "").strip().lower() or section.format
        if chosen is not None and chosen not in FORMATS:
            raise ConfigError(f"SVC_CHAT_FORMAT {chosen!r} is not a chat format; choose one of: {', '.join(FORMATS)}")
        raw_hosts = env["SVC_CHAT_ALLOW_HTTP_HOSTS"].split(",") if env.get("SVC_CHAT_ALLOW_HTTP_HOSTS") else None
        hosts = frozenset(h.strip().lower() for h in raw_hosts or section.allow_http_hosts if h.strip())
        events = env.get("SVC_CHAT_EVENTS") or section.events
        return cls(
            url=config_url or env.get("CHAT_WEBHOOK_URL") or None,
            format=chosen,  # type: ignore[arg-type]  # checked against FORMATS above
            rules=parse_rules(events) if events else DEFAULT_RULES,
            allow_http_hosts=hosts,
            retry_seconds=_seconds(env, "SVC_CHAT_RETRY_SECONDS", section.retry_seconds),
            retry_max_seconds=_seconds(env, "SVC_CHAT_RETRY_MAX_SECONDS", section.retry_max_seconds),
            timeout_seconds=_seconds(env, "SVC_CHAT_TIMEOUT_SECONDS", section.timeout_seconds),
        )


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not 0 < value <= 86400:
        raise ConfigError(f"{name} must be between 0 and 86400 seconds, not {raw!r}")
    return value


def validate_url(url: str, allow_http_hosts: frozenset[str]) -> str:
    """``url`` if svc may post to it: https, or http to a host listed in ``SVC_CHAT_ALLOW_HTTP_HOSTS``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        raise ConfigError(f"chat webhook URL {redact(url)!r} has no host")
    if parts.username or parts.password:
        raise ConfigError("chat webhook URL must not carry a user name or password")
    if parts.scheme == "https":
        return url
    if parts.scheme == "http" and host in allow_http_hosts:
        return url
    if parts.scheme == "http":
        raise ConfigError(
            f"chat webhook URL {redact(url)!r} uses plain http; use https, or allow this host with "
            f"SVC_CHAT_ALLOW_HTTP_HOSTS={host}"
        )
    raise ConfigError(f"chat webhook URL {redact(url)!r} must start with https://")


def redact(url: str) -> str:
    """Scheme and host only: a webhook URL's path is its secret."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return f"{parts.scheme}://{netloc}/…" if parts.scheme else "…"


def format_for(url: str, chosen: ChatFormat | None) -> ChatFormat:
    """The payload shape: the setting if given, else recognised from the URL, else Slack-compatible."""
    if chosen is not None:
        return chosen
    host = (urlsplit(url).hostname or "").lower()
    if host in ("discord.com", "discordapp.com") or host.endswith((".discord.com", ".discordapp.com")):
        return "discord"
    if host.endswith((".webhook.office.com", ".logic.azure.com")) or host == "outlook.office.com":
        return "teams"
    return "slack"
