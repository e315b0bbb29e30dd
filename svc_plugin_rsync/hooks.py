"""Hook implementations of the rsync sync backend plugin."""

from __future__ import annotations

from svc_host.plugin import SyncBackendSpec, hookimpl


@hookimpl
def svc_sync_backends() -> list[SyncBackendSpec]:
    from svc_plugin_rsync.backend import RsyncBackend

    return [
        SyncBackendSpec(
            name="rsync",
            factory=RsyncBackend,
            description="rsync over the profile's SSH: additive by default, mirror preflighted against "
            "max_delete, upload record (.svc-manifest.json), owner marker, per-mount lock",
        )
    ]
