"""The plugin's one hook: it offers the ``tarsync`` sync backend (``"sync_backend": "tarsync"`` on a profile)."""

from __future__ import annotations

from svc_host.plugin import SlurmTransport, SSHProfile, SyncBackendSpec, hookimpl

from svc_example_tarsync.backend import TarSyncBackend

SVC_PLUGIN_API = ">=1.2,<2"
"""The sync-backend protocol helpers (``claim_mount``, ``UploadRecord``, ``sync_lock``...) and the factory's
``transport`` (with ``run_bytes``) came with 1.2."""


@hookimpl
def svc_sync_backends() -> list[SyncBackendSpec]:
    return [
        SyncBackendSpec(
            name="tarsync",
            factory=tarsync_backend,
            description="tar over the profile's SSH (needs only sh, find and GNU tar on the cluster); "
            "svc's owner marker, upload record and lock, shared with rsync",
        )
    ]


def tarsync_backend(profile_name: str, profile: SSHProfile, *, transport: SlurmTransport) -> TarSyncBackend:
    """The backend of one profile, given the profile's transport (its commands run on svc's connection)."""
    return TarSyncBackend(profile_name, profile, transport=transport)
