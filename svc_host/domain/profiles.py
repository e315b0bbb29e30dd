"""SSH profiles and their mounts (pairs of a local directory and a cluster directory)."""

from __future__ import annotations

import posixpath
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from svc_host.domain.validation_words import worded_pattern

PROFILE_NAME_PATTERN = worded_pattern(
    r"^[a-z0-9][a-z0-9_.-]{0,63}$", "1-64 lowercase letters, digits, '.', '-' or '_', starting with a letter or digit"
)
"""Profile names double as transport names: lowercase, and never ``local``."""
MOUNT_NAME_PATTERN = worded_pattern(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", "1-64 letters, digits, '.', '-' or '_', starting with a letter or digit"
)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A POSIX variable name: the only kind of key a profile's ``env_vars`` may hold."""
DEFAULT_MAX_CHANNELS = 8
"""Below OpenSSH's default ``MaxSessions 10``, leaving room for an interactive ``ssh`` multiplexed on the same
connection."""
MAX_EXCLUDE_PATTERNS = 256
"""How many exclude patterns one mount (or one project file) may hold."""
MAX_EXCLUDE_PATTERN_LENGTH = 1024
"""The longest exclude pattern, in characters."""
MAX_JUMP_HOPS = 8
"""How many jump hosts one ``proxy_jump`` may chain."""
_JUMP_HOP = re.compile(
    r"(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})@)?"
    r"(?P<host>[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\])"
    r"(?::(?P<port>[0-9]{1,5}))?"
)


def check_proxy_jump(value: str) -> str:
    """Refuse a ``proxy_jump`` that is not ``[user@]host[:port]`` hops joined by commas (``ValueError``).

    OpenSSH (``-J``/``ProxyJump``, which it turns into a command line for a second ssh) and asyncssh
    (``tunnel``) both parse the value themselves, so only plain names get through: a host is a DNS name,
    an ``~/.ssh/config`` alias or a bracketed IPv6 address, never starting with ``-``; no spaces, quotes,
    ``%`` tokens, ``ssh://`` forms or other shell characters; ports 1-65535; at most ``MAX_JUMP_HOPS`` hops.
    ``""`` means no jump host.
    """
    if value == "":
        return value
    hops = value.split(",")
    if len(hops) > MAX_JUMP_HOPS:
        raise ValueError(f"proxy_jump chains {len(hops)} hosts; at most {MAX_JUMP_HOPS} are allowed")
    for hop in hops:
        found = _JUMP_HOP.fullmatch(hop)
        if found is None or (found["port"] is not None and not 1 <= int(found["port"]) <= 65535):
            raise ValueError(
                f"proxy_jump {value!r} is invalid at {hop[:80]!r}: give [user@]host[:port], several joined by "
                "commas (e.g. 'ada@bastion.example.org:2222,gateway'); names are letters, digits, '.', '-', '_'"
            )
    return value


def check_exclude_patterns(patterns: list[str]) -> list[str]:
    """Refuse exclude patterns rsync could not take as one filter rule each (``ValueError`` naming the pattern).

    A pattern is one rsync exclude pattern (``data/``, ``*.ckpt``, ``/checkpoints/**``): not empty, no NUL or
    line break (a line break would start a second rule), at most ``MAX_EXCLUDE_PATTERN_LENGTH`` characters;
    at most ``MAX_EXCLUDE_PATTERNS`` of them.
    """
    if len(patterns) > MAX_EXCLUDE_PATTERNS:
        raise ValueError(f"at most {MAX_EXCLUDE_PATTERNS} exclude patterns are allowed, not {len(patterns)}")
    for pattern in patterns:
        if not pattern.strip():
            raise ValueError("an exclude pattern is empty; give one rsync pattern per entry, e.g. 'data/'")
        if any(ch in pattern for ch in "\n\r\0"):
            raise ValueError(f"exclude pattern {pattern!r} contains a line break or NUL; give one pattern per entry")
        if len(pattern) > MAX_EXCLUDE_PATTERN_LENGTH:
            raise ValueError(
                f"exclude pattern {pattern[:40]!r}... is longer than {MAX_EXCLUDE_PATTERN_LENGTH} characters"
            )
    return patterns


class Mount(BaseModel):
    """A local directory kept in sync with a directory on the cluster."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=MOUNT_NAME_PATTERN)
    local: str = Field(min_length=1)
    remote: str = Field(min_length=1)
    exclude: list[str] = Field(default_factory=list)
    """rsync patterns this mount's syncs never upload nor delete, on top of svc's defaults and the project
    file's ``exclude`` (``.svc.json`` in ``local``)."""

    @field_validator("remote")
    @classmethod
    def _a_project_directory(cls, value: str) -> str:
        check_remote(value)
        return value

    @field_validator("exclude")
    @classmethod
    def _exclude_patterns(cls, value: list[str]) -> list[str]:
        return check_exclude_patterns(value)


def check_remote(remote: str) -> None:
    """Refuse a mount ``remote`` that a mirror could wipe more than a project from.

    A mirror deletes what is not in the local directory, so the remote root may not be the login directory
    (``~``, ``.``; ``$HOME`` is not expanded and is refused as a first component), ``/``, ``/home`` or a
    home directory ``/home/<user>`` or ``/root``, nor climb with ``..``; nor may it be a ``.ssh`` directory or lie
    in one (a sync would write the user's keys). The check is lexical: the cluster is not asked where a symlink
    leads. Other characters are data (never expanded).
    Raises ``ValueError`` (pydantic reports it as a validation error naming ``remote``).
    """
    path = remote.strip()
    if "\0" in path:
        raise ValueError("remote path contains a NUL byte")
    if path.split("/")[0] in ("$HOME", "${HOME}"):
        raise ValueError(
            f"remote path {remote!r} starts with $HOME, which is not expanded (and would name your home); "
            "use '~/dir' or an absolute path"
        )
    if ".." in path.split("/"):
        raise ValueError(f"remote path {remote!r} contains '..'; give the directory itself")
    root = cluster_root(path)
    parts = [part for part in root.split("/") if part not in ("", ".")]
    if not parts:
        what = "the filesystem root" if root.startswith("/") else "your home directory on the cluster"
        raise ValueError(f"remote path {remote!r} is {what}; choose a project directory below it, e.g. '~/project'")
    if root.startswith("/") and parts[0] == "home" and len(parts) <= 2:
        what = "the directory of all homes" if len(parts) == 1 else "a home directory"
        raise ValueError(f"remote path {remote!r} is {what}; choose a project directory below it")
    if root.startswith("/") and parts == ["root"]:
        raise ValueError(f"remote path {remote!r} is a home directory; choose a project directory below it")
    if ".ssh" in parts:
        raise ValueError(f"remote path {remote!r} is in or below .ssh, where your keys are; choose a project directory")


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
    max_channels: int = Field(default=DEFAULT_MAX_CHANNELS, ge=2, le=64)
    """Channels (commands, the SFTP session) open at once on the profile's connection; more requests wait for
    one. A stock sshd allows 10 per connection (``MaxSessions``); the SFTP session holds one while open."""
    mounts: list[Mount] = Field(default_factory=list)
    env_vars: dict[str, str] = Field(default_factory=dict)
    """Set with ``env`` before every remote command: keys must be POSIX names, values are passed quoted."""
    sync_backend: str = Field(default="rsync", pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    """The sync backend (a name offered through ``svc_sync_backends``) that copies this profile's mounts."""

    def connection_settings(self) -> dict[str, object]:
        """Everything that decides how the cluster is reached and commands run there (all but ``mounts`` and
        ``description``): when it changes, a kept connection or sync backend of the profile is out of date."""
        return self.model_dump(exclude={"mounts", "description"})

    @field_validator("proxy_jump")
    @classmethod
    def _jump_hosts(cls, value: str | None) -> str | None:
        return None if value is None else check_proxy_jump(value)

    @field_validator("env_vars")
    @classmethod
    def _posix_names(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if not ENV_NAME.fullmatch(key):
                raise ValueError(
                    f"env_vars key {key!r} is not a variable name: use letters, digits and '_', "
                    "not starting with a digit"
                )
            if "\0" in item:
                raise ValueError(f"env_vars value of {key!r} contains a NUL byte")
        return value


class HostConfig(BaseModel):
    """What the host hands to ``svc_transports``: the SSH profiles it knows and which one is current."""

    model_config = ConfigDict(frozen=True)

    profiles: dict[str, SSHProfile] = Field(default_factory=dict)
    current_profile: str | None = None
