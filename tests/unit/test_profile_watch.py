"""A running process sees profile changes made by other processes (``ProfilesWatch`` + ``TransportRegistry``)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig, Mount, SSHProfile
from svc_host.host import Host
from svc_host.plugin_core.records import SyncBackendSpec, TransportSpec
from svc_host.settings.profiles import ProfileStore
from svc_host.testing.fake import FakeTransport
from svc_host.testing.waiting import eventually
from svc_host.transports.sync_backend import InspectReport, SyncBackend, SyncResult


class ClosingTransport(FakeTransport):
    def __init__(self, name: str, profile: SSHProfile) -> None:
        super().__init__(name)
        self.profile = profile
        self.closed = False

    async def close(self) -> None:
        self.closed = True


class RecordingBackend(SyncBackend):
    def __init__(self, profile_name: str, profile: SSHProfile) -> None:
        self.profile = profile
        self.closed = False

    async def sync(self, mount: Mount, **_: Any) -> SyncResult:
        raise NotImplementedError

    async def inspect(self, mount: Mount, *, max_paths: int = 1000) -> InspectReport:
        raise NotImplementedError

    def lock(self, mount: Mount) -> Any:
        raise NotImplementedError

    async def close(self) -> None:
        self.closed = True


@hookimpl
def svc_transports(config: HostConfig) -> list[TransportSpec]:
    return [
        TransportSpec(name=name, factory=lambda name=name, profile=profile: ClosingTransport(name, profile))
        for name, profile in config.profiles.items()
    ]


@pytest.fixture
def writer(host: Host) -> ProfileStore:
    """Another process's view of the same profiles file (a second store, as ``svc profile`` would use)."""
    return ProfileStore(host.paths.profiles_file)


@pytest.fixture
def host(svc_register_plugin: Any, svc_test_host: Host) -> Host:
    svc_register_plugin(SimpleNamespace(svc_transports=svc_transports), "closing-transports")
    svc_register_plugin(
        SimpleNamespace(svc_sync_backends=hookimpl(lambda: [SyncBackendSpec("recording", RecordingBackend)])),
        "recording-backend",
    )
    return svc_test_host


def cluster(**fields: object) -> SSHProfile:
    return SSHProfile.model_validate({"hostname": "login.example.org", "username": "ada", **fields})


async def test_a_profile_added_elsewhere_is_usable_at_once(host: Host, writer: ProfileStore, tmp_path: Path) -> None:
    assert host.transports.config.profiles == {}
    writer.create("gpu", cluster())
    transport = host.transport("gpu")
    assert isinstance(transport, ClosingTransport)
    assert transport.profile.hostname == "login.example.org"
    writer.activate("gpu")
    assert host.server_transport_name() == "gpu"
    project = tmp_path / "project-dir"
    project.mkdir()
    writer.add_mount("gpu", Mount(name="code", local=str(project), remote="r/code"))
    assert [mount.name for mount in host.transports.config.profiles["gpu"].mounts] == ["code"]
    writer.delete("gpu")
    assert host.transports.config.profiles == {}
    await eventually(lambda: transport.closed, what="the removed profile's connection closing")  # not kept


async def test_only_a_changed_connection_target_reconnects(host: Host, writer: ProfileStore, tmp_path: Path) -> None:
    writer.create("gpu", cluster(sync_backend="recording"))
    writer.create("cpu", cluster())
    gpu, cpu = host.transport("gpu"), host.transport("cpu")
    backend = host.sync_backend("gpu")
    project = tmp_path / "p"
    project.mkdir()

    writer.add_mount("gpu", Mount(name="code", local=str(project), remote="r/code"))
    writer.update("gpu", {"description": "renamed"})
    assert host.transport("gpu") is gpu  # mounts and description do not touch the connection
    assert host.sync_backend("gpu") is backend
    assert not gpu.closed

    writer.update("gpu", {"port": 2222})
    fresh = host.transport("gpu")
    assert fresh is not gpu
    assert isinstance(fresh, ClosingTransport)
    assert fresh.profile.port == 2222
    assert host.sync_backend("gpu") is not backend
    assert host.transport("cpu") is cpu
    await eventually(lambda: gpu.closed and backend.closed, what="the old connection and sync backend closing")
    assert not cpu.closed


async def test_an_invalid_file_keeps_the_last_valid_profiles(
    host: Host, writer: ProfileStore, caplog: pytest.LogCaptureFixture
) -> None:
    writer.create("gpu", cluster())
    assert "gpu" in host.transports.config.profiles
    host.paths.profiles_file.write_text('{"profiles": {"gpu": {"port": "not a port"}}}')
    with caplog.at_level(logging.WARNING, logger="svc_host.settings.profiles"):
        assert "gpu" in host.transports.config.profiles
        assert "gpu" in host.transports.config.profiles
    warnings = [record for record in caplog.records if "still using the previous profiles" in record.message]
    assert len(warnings) == 1  # once per version of the file, not on every look
    writer.path.unlink()
    writer.create("cpu", cluster())
    assert sorted(host.transports.config.profiles) == ["cpu"]


async def test_an_unchanged_file_is_not_read_again(
    host: Host, writer: ProfileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer.create("gpu", cluster())
    assert "gpu" in host.transports.config.profiles
    reads: list[str] = []
    original = ProfileStore.load

    def counting(self: ProfileStore) -> Any:
        reads.append("load")
        return original(self)

    monkeypatch.setattr(ProfileStore, "load", counting)
    for _ in range(5):
        host.transport("gpu")
    assert reads == []
    writer.update("gpu", {"description": "x"})  # the writer's own load counts once
    host.transport("gpu")
    assert reads == ["load", "load"]
