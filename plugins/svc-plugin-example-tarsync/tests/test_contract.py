"""The tarsync backend passes svc's ``SyncBackendContract`` on the dev cluster, and shares rsync's claim."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from svc_host.plugin import (
    Mount,
    OwnerMarker,
    SlurmTransport,
    SSHProfile,
    SvcPaths,
    ssh_exec_files,
    temporary_name,
)
from svc_host.testing import SyncBackendContract, profile_transport, user_entries, write_tree

from svc_example_tarsync.backend import TarSyncBackend

pytestmark = pytest.mark.cluster


class Cluster:
    """The test's own way onto the login node: a transport of its own, beside the one the backend is given."""

    def __init__(self, transport: SlurmTransport) -> None:
        self.transport = transport

    async def run(self, *argv: str, stdin: bytes | None = None) -> bytes:
        done = await self.transport.run_bytes(list(argv), stdin=stdin)
        assert done.exit_code == 0, done.stderr
        return done.stdout

    async def listing(self, directory: str) -> set[str]:
        """Every entry under ``directory``, relative, directories ending in ``/`` (empty when it is missing)."""
        out = await self.run(
            "sh", "-c", '[ -d "$1" ] && find "$1" -mindepth 1 -printf "%y %P\\0"; exit 0', "-", directory
        )
        entries = (raw.decode().partition(" ") for raw in out.split(b"\0") if raw)
        return {f"{name}/" if kind == "d" else name for kind, _, name in entries}

    async def write(self, path: str, data: bytes) -> None:
        await self.run("mkdir", "-p", "--", path.rsplit("/", 1)[0])
        await self.run(*ssh_exec_files.write_replacing_argv(temporary_name(path), path), stdin=data)


@pytest.fixture
async def cluster(dev_profile: SSHProfile) -> AsyncIterator[Cluster]:
    async with profile_transport("dev", dev_profile) as transport:
        yield Cluster(transport)


@pytest.fixture
async def transport(dev_profile: SSHProfile) -> AsyncIterator[SlurmTransport]:
    """The profile's transport as svc gives it to the backend's factory."""
    async with profile_transport("dev", dev_profile) as made:
        yield made


@pytest.fixture
async def remote_base(cluster: Cluster) -> AsyncIterator[str]:
    """A fresh directory name in the login directory (not created); removed afterwards."""
    base = f"svc-tarsync-{uuid.uuid4().hex[:12]}"
    yield base
    await cluster.run("rm", "-rf", "--", base)


@pytest.fixture
def fresh_mount(tmp_path: Path, remote_base: str) -> Mount:
    local = tmp_path / "local"
    local.mkdir()
    return Mount(name="contract", local=str(local), remote=f"{remote_base}/mount")


class TestTarSyncContract(SyncBackendContract):
    @pytest.fixture
    async def backend(
        self, dev_profile: SSHProfile, transport: SlurmTransport, tmp_path: Path
    ) -> AsyncIterator[TarSyncBackend]:
        backend = TarSyncBackend("dev", dev_profile, transport=transport, state_dir=tmp_path / "state")
        yield backend
        await backend.close()

    @pytest.fixture
    def mount(self, fresh_mount: Mount) -> Mount:
        return fresh_mount

    @pytest.fixture
    def remote_listing(self, cluster: Cluster, fresh_mount: Mount) -> Callable[[], Awaitable[set[str]]]:
        return lambda: cluster.listing(fresh_mount.remote)

    @pytest.fixture
    def remote_write(self, cluster: Cluster, fresh_mount: Mount) -> Callable[[str, bytes], Awaitable[None]]:
        return lambda relative, data: cluster.write(f"{fresh_mount.remote}/{relative}", data)


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "svc_host", *args], capture_output=True, text=True, check=False)


@pytest.mark.usefixtures("svc_isolated_home")
async def test_switching_a_profile_from_rsync_to_tarsync_keeps_the_claim(
    dev_profile: SSHProfile, fresh_mount: Mount, cluster: Cluster
) -> None:
    """One machine, one mount: what rsync claimed and recorded, tarsync reads as its own (and back again)."""
    local = Path(fresh_mount.local)
    write_tree(local, {"a.txt": "a", "gone.txt": "g"})
    profiles = SvcPaths.from_env().profiles_file

    def use(backend: str) -> None:
        profile = dev_profile.model_dump() | {"mounts": [fresh_mount.model_dump()], "sync_backend": backend}
        profiles.parent.mkdir(parents=True, exist_ok=True)
        profiles.write_text(json.dumps({"current": "dev", "profiles": {"dev": profile}}))

    use("rsync")
    first = svc("sync", fresh_mount.name)
    assert first.returncode == 0, first.stderr
    claimed = OwnerMarker.parse(await cluster.run("cat", f"{fresh_mount.remote}/.svc-owner"))
    assert claimed is not None

    use("tarsync")
    (local / "gone.txt").unlink()
    write_tree(local, {"b.txt": "b"})
    mirror = svc("sync", fresh_mount.name, "--delete")
    assert mirror.returncode == 0, mirror.stderr  # no "synced from another machine", no adopt needed
    assert user_entries(await cluster.listing(fresh_mount.remote)) == {"a.txt", "b.txt"}
    assert OwnerMarker.parse(await cluster.run("cat", f"{fresh_mount.remote}/.svc-owner")) == claimed  # unchanged
    record = json.loads(await cluster.run("cat", f"{fresh_mount.remote}/.svc-manifest.json"))
    assert record["paths"] == ["a.txt", "b.txt"]  # rsync's record merged, the mirrored path dropped

    use("rsync")
    back = svc("sync", fresh_mount.name, "--delete", "--dry-run")
    assert back.returncode == 0, back.stderr


async def test_hostile_names_sync_exactly_and_nothing_runs(
    dev_profile: SSHProfile, transport: SlurmTransport, tmp_path: Path, remote_base: str, cluster: Cluster
) -> None:
    """Names cross as arguments or on stdin, never as shell code: on the way up, in the listing, in a mirror."""
    pwned = Path(f"/tmp/pwned-{uuid.uuid4().hex[:12]}")
    names = [
        "-dash",
        " lead",
        "new\nline",
        "it's",
        'say "hi"',
        "a;b|c&d",
        "ü ✓",
        f"$(touch {pwned})",
        f"`touch {pwned}`",
    ]
    local = tmp_path / "local"
    write_tree(local, {name: name for name in names} | {"sub dir/x": "x"})
    mount = Mount(name="hostile", local=str(local), remote=f"{remote_base}/we ird $(touch {pwned}); |'\"`x`")
    expected = {str(path.relative_to(local)) + ("/" if path.is_dir() else "") for path in local.rglob("*")}
    backend = TarSyncBackend("dev", dev_profile, transport=transport, state_dir=tmp_path / "state")
    try:
        assert (await backend.sync(mount)).files_transferred == len(names) + 1
        assert user_entries(await cluster.listing(mount.remote)) == expected
        for name in names[:5]:
            (local / name).unlink()
        mirror = await backend.sync(mount, delete=True)
        assert sorted(mirror.deleted_paths) == sorted(names[:5])
        assert user_entries(await cluster.listing(mount.remote)) == expected - set(names[:5])
    finally:
        await backend.close()
    assert not pwned.exists()  # noqa: ASYNC240  (one stat, after the test)
