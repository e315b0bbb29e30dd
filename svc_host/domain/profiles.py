"""SSH profiles and their mounts (pairs of a local directory and a cluster directory)."""

from __future__ import annotations

import posixpath

from pydantic import BaseModel, ConfigDict, Field, field_validator

PROFILE_NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,63}$"
"""Profile names double as transport names: lowercase, and never ``local``."""
MOUNT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class Mount(BaseModel):
    """A local directory kept in sync with a directory on the cluster."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=MOUNT_NAME_PATTERN)
    local: str = Field(min_length=1)
    remote: str = Field(min_length=1)

    @field_validator("remote")
    @classmethod
    def _no_other_users_home(cls, value: str) -> str:
        cluster_root(value)
        return value


def cluster_root(remote: str) -> str:
    """A mount's ``remote`` as a path that commands, SFTP and rsync all resolve the same way.

    ``~`` and ``~/x`` become relative to the login directory (``.``, ``x``): neither SFTP nor rsync expands a
    tilde. A relative path starting with ``-`` gets ``./`` so no tool reads it as an option.
    """
    path = remote.strip()
    if path in ("~", "~/"):
        return "."
    if path.startswith("~/"):
        path = path[2:]
    elif path.startswith("~"):
        raise ValueError(f"remote path {remote!r}: '~user' is not supported; use an absolute path or '~/dir'")
    path = posixpath.normpath(path) if path else "."
    return f"./{path}" if path.startswith("-") else path


class SSHProfile(BaseModel):
    """How to reach one cluster's login node."""

    model_config = ConfigDict(extra="forbid")

    hostname: str = ""
    username: str = ""
    key_filename: str = ""
    port: int = Field(default=22, ge=1, le=65535)
    description: str = ""
    ssh_host: str | None = None
    proxy_jump: str | None = None
    known_hosts: str | None = None
    """A known_hosts file for this profile; unknown host keys are rejected unless ``accept_unknown_host``."""
    accept_unknown_host: bool = False
    mounts: list[Mount] = Field(default_factory=list)
    env_vars: dict[str, str] = Field(default_factory=dict)


class HostConfig(BaseModel):
    """What the host hands to ``svc_transports``: the SSH profiles it knows and which one is current."""

    model_config = ConfigDict(frozen=True)

    profiles: dict[str, SSHProfile] = Field(default_factory=dict)
    current_profile: str | None = None
