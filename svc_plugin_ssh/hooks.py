"""Hook implementations of the SSH transport plugin."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from svc_host.plugin import HostConfig, SSHProfile, TransportSpec, hookimpl

if TYPE_CHECKING:
    from svc_plugin_ssh.transport import SSHTransport


@hookimpl
def svc_transports(config: HostConfig) -> list[TransportSpec]:
    return [
        TransportSpec(
            name=name,
            factory=partial(ssh_transport, name, profile),
            description=profile.description or f"{profile.username}@{profile.ssh_host or profile.hostname}",
            remote=True,
            mounts=True,
        )
        for name, profile in sorted(config.profiles.items())
    ]


def ssh_transport(name: str, profile: SSHProfile) -> SSHTransport:
    """The transport of one profile; its module (and asyncssh with it) is imported when the profile is first
    used, never when a process only lists the transports."""
    from svc_plugin_ssh.transport import SSHTransport

    return SSHTransport(name, profile)
