"""Hook implementations of the SSH transport plugin."""

from __future__ import annotations

from functools import partial

from svc_host.plugin import HostConfig, TransportSpec, hookimpl


@hookimpl
def svc_transports(config: HostConfig) -> list[TransportSpec]:
    from svc_plugin_ssh.transport import SSHTransport

    return [
        TransportSpec(
            name=name,
            factory=partial(SSHTransport, name, profile),
            description=profile.description or f"{profile.username}@{profile.ssh_host or profile.hostname}",
            remote=True,
            mounts=True,
        )
        for name, profile in sorted(config.profiles.items())
    ]
