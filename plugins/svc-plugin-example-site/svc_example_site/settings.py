"""The site's settings, from ``SVC_SITE_*`` variables (a site copying this plugin may hard-code them)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from svc_host.plugin import ConfigError

_LOGIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*@[A-Za-z0-9][A-Za-z0-9.-]*$")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class SiteSettings:
    """``login`` is ``user@host`` of the login node; ``account`` and ``qos`` go on every submission."""

    login: str
    account: str
    qos: str = "normal"
    port: int = 22
    key: str | None = None
    known_hosts: str | None = None

    def __post_init__(self) -> None:
        if not _LOGIN.match(self.login):
            raise ConfigError(f"SVC_SITE_LOGIN {self.login!r} must look like user@login.example.org")
        for name, value in (("SVC_SITE_ACCOUNT", self.account), ("SVC_SITE_QOS", self.qos)):
            if not _NAME.match(value):
                raise ConfigError(f"{name} {value!r} may hold only letters, digits, '.', '_' and '-'")
        if not 0 < self.port < 65536:
            raise ConfigError(f"SVC_SITE_PORT {self.port} is not a TCP port")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SiteSettings | None:
        """The settings, or None when the site is not configured (``SVC_SITE_LOGIN``/``SVC_SITE_ACCOUNT``)."""
        env = os.environ if env is None else env
        if not env.get("SVC_SITE_LOGIN") or not env.get("SVC_SITE_ACCOUNT"):
            return None
        port = env.get("SVC_SITE_PORT", "22")
        if not port.isdigit():
            raise ConfigError(f"SVC_SITE_PORT {port!r} is not a TCP port")
        return cls(
            login=env["SVC_SITE_LOGIN"],
            account=env["SVC_SITE_ACCOUNT"],
            qos=env.get("SVC_SITE_QOS") or "normal",
            port=int(port),
            key=env.get("SVC_SITE_KEY") or None,
            known_hosts=env.get("SVC_SITE_KNOWN_HOSTS") or None,
        )


def configured_account() -> str:
    """The account every job is charged to; a ``ConfigError`` saying what to set when the site is not set up."""
    settings = SiteSettings.from_env()
    if settings is None:
        raise ConfigError("the site is not configured: set SVC_SITE_LOGIN and SVC_SITE_ACCOUNT")
    return settings.account
