"""Pure translation of an SSH profile into asyncssh connection options (the transport's connection, its jump
hosts)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from svc_host.plugin import SSHProfile


def connect_options(profile: SSHProfile) -> tuple[str, dict[str, Any]]:
    """The host to connect to and the keyword options for ``asyncssh.connect``.

    ``ssh_host`` is an alias resolved by asyncssh through ``~/.ssh/config`` (HostName, User, Port,
    IdentityFile, ProxyJump); explicit profile fields override what the config file says.
    """
    host = profile.ssh_host or profile.hostname
    options: dict[str, Any] = {"keepalive_interval": 30, "keepalive_count_max": 3, "connect_timeout": 15}
    if profile.hostname and profile.ssh_host:
        options["host"] = profile.hostname
    if profile.username:
        options["username"] = profile.username
    if profile.port != 22 or not profile.ssh_host:
        options["port"] = profile.port
    if profile.key_filename:
        options["client_keys"] = [os.path.expanduser(profile.key_filename)]
    if profile.proxy_jump:
        options["tunnel"] = profile.proxy_jump
    if profile.accept_unknown_host:
        options["known_hosts"] = None
    elif profile.known_hosts:
        options["known_hosts"] = os.path.expanduser(profile.known_hosts)
    return host, options


@dataclass(frozen=True)
class Hop:
    """One host of a ``ProxyJump`` chain (``[user@]host[:port]``); unset parts come from ``~/.ssh/config``."""

    user: str | None
    host: str
    port: int | None

    @property
    def label(self) -> str:
        """``user@host:port`` as far as known, for messages."""
        return (f"{self.user}@" if self.user else "") + self.host + (f":{self.port}" if self.port else "")


def jump_hops(spec: str) -> list[Hop]:
    """``"a@bastion:2222,gateway"`` -> the hops in order; ``none`` (OpenSSH's "no jump") is no hop.

    A ``ssh://`` prefix is allowed as in OpenSSH; a port that is not a number is a ``ValueError``.
    """
    hops = []
    for part in spec.split(","):
        word = part.strip().removeprefix("ssh://")
        if not word or word.lower() == "none":
            continue
        user, _, host = word.rpartition("@")
        port: int | None = None
        if host.count(":") == 1:
            host, _, port_text = host.partition(":")
            if not port_text.isdigit():
                raise ValueError(f"jump host {word!r}: port {port_text!r} is not a number")
            port = int(port_text)
        hops.append(Hop(user=user or None, host=host, port=port))
    return hops
