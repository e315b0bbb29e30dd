"""The site's settings: the section ``plugins.site`` of svc's layered configuration.

A site's admin writes it once for everyone (``/etc/svc/config.json``), a user in their own file (``svc config set
plugins.site.login me@login.example``) or a server's API (``PUT /api/config``). svc shows the section with these
defaults filled in and refuses a value this model refuses, naming the field, before anything is written.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator
from svc_host.plugin import ConfigError

NAME = "site"
"""The plugin's name (its entry point in ``pyproject.toml``), hence its section ``plugins.site``."""

_LOGIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*@[A-Za-z0-9][A-Za-z0-9.-]*$")
_SLURM_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_EXAMPLES = {"login": "me@login.example", "account": "proj42"}


class SiteSettings(BaseModel):
    """``login`` (``user@host`` of the login node) and ``account`` are what a site must set; every job is charged
    to ``account`` and ``qos``. ``key`` and ``known_hosts`` are paths on this machine (``~`` allowed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    login: str | None = None
    account: str | None = None
    qos: str = "normal"
    port: int = Field(default=22, ge=1, le=65535)
    key: str | None = None
    known_hosts: str | None = None

    @field_validator("login")
    @classmethod
    def _login(cls, value: str | None) -> str | None:
        if value is not None and not _LOGIN.match(value):
            raise ValueError(f"{value!r} must look like user@login.example.org")
        return value

    @field_validator("account", "qos")
    @classmethod
    def _slurm_name(cls, value: str | None) -> str | None:
        if value is not None and not _SLURM_NAME.match(value):
            raise ValueError(
                f"{value!r} may hold only letters, digits, '.', '_' and '-', and not start with '.' or '-'"
            )
        return value

    def require(self) -> None:
        """Nothing once ``login`` and ``account`` are set; else a ``ConfigError`` saying exactly what to set."""
        if self.login is None or self.account is None:
            raise self._unconfigured()

    @property
    def login_node(self) -> str:
        """``login``, as ``require`` would have it."""
        if self.login is None:
            raise self._unconfigured()
        return self.login

    @property
    def charged_account(self) -> str:
        """``account``, as ``require`` would have it."""
        if self.account is None:
            raise self._unconfigured()
        return self.account

    def _unconfigured(self) -> ConfigError:
        missing = [field for field in _EXAMPLES if getattr(self, field) is None]
        fields = " and ".join(f"plugins.{NAME}.{field}" for field in missing)
        example = f"svc config set plugins.{NAME}.{missing[0]} {_EXAMPLES[missing[0]]}"
        return ConfigError(f"the site is not configured: set {fields} (e.g. {example})")
