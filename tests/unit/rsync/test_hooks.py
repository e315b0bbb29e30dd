"""The plugin registers the ``rsync`` backend through ``svc_sync_backends``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from svc_host.domain.profiles import SSHProfile
from svc_host.transports.sync_backend import SyncBackend
from svc_plugin_rsync import hooks
from svc_plugin_rsync.backend import RsyncBackend
from svc_plugin_ssh.transport import SSHTransport

if TYPE_CHECKING:
    from svc_host.plugin_core.manager import PluginManager


def test_rsync_backend_is_registered(
    svc_plugin_manager: PluginManager, svc_register_plugin: Callable[..., Any]
) -> None:
    svc_register_plugin(hooks, "rsync")
    spec = svc_plugin_manager.sync_backend("rsync")
    assert spec.takes_transport  # svc's files on the remote go over the profile's transport
    profile = SSHProfile(hostname="h")
    backend = spec.create("dev", profile, SSHTransport("dev", profile))
    assert isinstance(backend, RsyncBackend)
    assert isinstance(backend, SyncBackend)
    assert spec.description
