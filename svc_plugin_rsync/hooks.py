"""Hook implementations of the rsync sync backend plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from svc_host.plugin import SlurmTransport, SSHProfile, SyncBackendSpec, hookimpl

if TYPE_CHECKING:
    from svc_plugin_rsync.backend import RsyncBackend


@hookimpl
def svc_sync_backends() -> list[SyncBackendSpec]:
    return [
        SyncBackendSpec(
            name="rsync",
            factory=rsync_backend,
            description="rsync over the profile's SSH: additive by default, mirror preflighted against "
            "max_delete, upload record (.svc-manifest.json), owner marker, per-mount lock",
        )
    ]


def rsync_backend(profile_name: str, profile: SSHProfile, *, transport: SlurmTransport) -> RsyncBackend:
    """The backend of one profile, on the profile's transport; its module is imported when a mount is first synced
    or inspected, never when a process only lists the backends."""
    from svc_plugin_rsync.backend import RsyncBackend

    return RsyncBackend(profile_name, profile, transport=transport)
