"""Hook implementations of the ``local`` transport plugin."""

from __future__ import annotations

from svc_host.plugin import HostConfig, TransportSpec, hookimpl


@hookimpl
def svc_transports(config: HostConfig) -> list[TransportSpec]:
    from svc_plugin_local.transport import LocalTransport

    return [TransportSpec(name="local", factory=LocalTransport, description="Slurm on this machine")]
