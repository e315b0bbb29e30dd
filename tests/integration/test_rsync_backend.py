"""The rsync sync backend against the dev cluster's real loopback sshd (``scripts/devcluster up``).

Runs the ``SyncBackendContract`` plus rsync-specific cases: owner marker, lock contention, hostile file
names, a symlinked record, exclude changes, missing rsync, failing rsync, odd key paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.errors import ConfigError, SyncError
from svc_host.plugin import SvcPaths
from svc_host.settings import trust
from svc_host.settings.config import trust_project
from svc_host.testing.plugin import skip_or_fail
from svc_host.testing.sync_contract import SyncBackendContract, user_entries, write_tree
from svc_host.testing.waiting import DEADLINE
from svc_host.transports.sync_backend import StaleUnknownReason, SyncResult
from svc_host.transports.sync_lock import lock_path
from svc_plugin_rsync.backend import RsyncBackend
from svc_plugin_rsync.itemize import Summary
from svc_plugin_ssh.options import connect_options
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
PROFILE = "dev"


@dataclass(frozen=True)
class DevSSH:
    host: str
    port: int
    user: str
    key: str
    known_hosts: str

    def profile(self, **changes: object) -> SSHProfile:
        fields: dict[str, object] = {
            "hostname": self.host,
            "username": self.user,
            "port": self.port,
            "key_filename": self.key,
            "known_hosts": self.known_hosts,
        }
        return SSHProfile.model_validate(fields | changes)


@pytest.fixture(scope="session")
def dev_ssh() -> DevSSH:
    """The dev cluster's sshd from ``scripts/devcluster env``, answering; else skip (fail under CI=true)."""
    script = REPO / "scripts" / "devcluster"
    if not script.exists():
        skip_or_fail("scripts/devcluster is missing")
    try:
        out = subprocess.run([str(script), "env"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        skip_or_fail(f"`scripts/devcluster env` failed: {exc}")
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    try:
        dev = DevSSH(
            env["SVC_DEV_SSH_HOST"],
            int(env["SVC_DEV_SSH_PORT"]),
            env["SVC_DEV_SSH_USER"],
            env["SVC_DEV_SSH_KEY"],
            env["SVC_DEV_SSH_KNOWN_HOSTS"],
        )
    except (KeyError, ValueError) as exc:
        skip_or_fail(f"`scripts/devcluster env` lacks SSH settings: {exc}")
    probe = subprocess.run(
        ["ssh", "-p", str(dev.port), "-i", dev.key, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
         "-o", f"UserKnownHostsFile={dev.known_hosts}", "-o", "StrictHostKeyChecking=yes",
         f"{dev.user}@{dev.host}", "true"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        skip_or_fail(f"dev sshd does not answer (run scripts/devcluster up): {probe.stderr.strip()}")
    return dev


class RemoteShell:
    """Test-side access to the remote account, independent of the backend under test."""

    def __init__(self, conn: asyncssh.SSHClientConnection, sftp: asyncssh.SFTPClient) -> None:
        self.conn = conn
        self.sftp = sftp

    async def run(self, *argv: str) -> asyncssh.SSHCompletedProcess:
        return await self.conn.run(shlex.join(argv), check=False)

    async def listing(self, directory: str) -> set[str]:
        result = await self.conn.run(
            shlex.join(["find", directory, "-mindepth", "1", "-printf", r"%y %P\0"]), check=False, encoding=None
        )
        stdout, stderr = _as_bytes(result.stdout), _as_bytes(result.stderr)
        if result.exit_status != 0:
            assert b"No such file" in stderr, stderr
            return set()
        entries = set()
        for raw in stdout.split(b"\0"):
            if raw:
                kind, _, name = raw.decode().partition(" ")
                entries.add(f"{name}/" if kind == "d" else name)
        return entries

    async def write(self, path: str, data: bytes) -> None:
        parent = path.rsplit("/", 1)[0]
        await self.sftp.makedirs(parent, exist_ok=True)
        async with self.sftp.open(path, "wb") as handle:
            await handle.write(data)

    async def read(self, path: str) -> bytes:
        async with self.sftp.open(path, "rb") as handle:
            data = await handle.read()
        return data if isinstance(data, bytes) else data.encode()


def _as_bytes(value: bytes | str | None) -> bytes:
    return value.encode() if isinstance(value, str) else value or b""


@pytest.fixture
async def shell(dev_ssh: DevSSH) -> AsyncIterator[RemoteShell]:
    host, options = connect_options(dev_ssh.profile())
    async with asyncssh.connect(host, **options) as conn, conn.start_sftp_client() as sftp:
        yield RemoteShell(conn, sftp)


@pytest.fixture
async def remote_base(shell: RemoteShell) -> AsyncIterator[str]:
    """A fresh directory name under the remote home (not created); removed afterwards."""
    base = f"svc-test-{uuid.uuid4().hex[:12]}"
    yield base
    await shell.run("chmod", "-R", "u+w", base)
    await shell.run("rm", "-rf", "--", base)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@contextlib.asynccontextmanager
async def rsync_on(profile: SSHProfile, **options: Any) -> AsyncIterator[RsyncBackend]:
    """An rsync backend of ``profile`` on a transport of its own (as svc gives it the profile's), both closed after."""
    transport = SSHTransport(PROFILE, profile)
    backend = RsyncBackend(PROFILE, profile, transport=transport, **options)
    try:
        yield backend
    finally:
        await backend.close()
        await transport.close()


@pytest.fixture
async def rsync_backend(dev_ssh: DevSSH, state_dir: Path) -> AsyncIterator[RsyncBackend]:
    async with rsync_on(dev_ssh.profile(), state_dir=state_dir) as backend:
        yield backend


@pytest.fixture
def test_mount(tmp_path: Path, remote_base: str) -> Mount:
    local = tmp_path / "local"
    local.mkdir()
    return Mount(name="contract", local=str(local), remote=f"{remote_base}/mount")


class TestRsyncBackendContract(SyncBackendContract):
    @pytest.fixture
    def backend(self, rsync_backend: RsyncBackend) -> RsyncBackend:
        return rsync_backend

    @pytest.fixture
    def mount(self, test_mount: Mount) -> Mount:
        return test_mount

    @pytest.fixture
    def remote_listing(self, shell: RemoteShell, test_mount: Mount) -> Callable[[], Awaitable[set[str]]]:
        return lambda: shell.listing(test_mount.remote)

    @pytest.fixture
    def remote_write(self, shell: RemoteShell, test_mount: Mount) -> Callable[[str, bytes], Awaitable[None]]:
        return lambda relative, data: shell.write(f"{test_mount.remote}/{relative}", data)


# -- rsync-specific cases ----------------------------------------------------------------------------


async def test_owner_marker_refuses_another_machine_unless_forced(
    dev_ssh: DevSSH, rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell, state_dir: Path
) -> None:
    local = Path(test_mount.local)
    write_tree(local, {"a.txt": "a"})
    async with rsync_on(dev_ssh.profile(), state_dir=state_dir / "other", machine_id="other-machine") as other:
        await other.sync(test_mount)
    (local / "b.txt").write_text("b")
    for dry_run in (False, True):
        with pytest.raises(SyncError) as refused:
            await rsync_backend.sync(test_mount, dry_run=dry_run)
        assert refused.value.remedy == "force"
    assert "b.txt" not in await shell.listing(test_mount.remote)

    result = await rsync_backend.sync(test_mount, force=True)
    assert result.files_transferred == 1
    marker = json.loads(await shell.read(f"{test_mount.remote}/.svc-owner"))
    assert marker["machine_id"] == rsync_backend.machine_id
    assert (await rsync_backend.sync(test_mount)).files_transferred == 0  # ours now


async def test_hand_written_foreign_marker_is_refused(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    foreign = {"machine_id": "f" * 32, "hostname": "laptop", "user": "ada", "claimed_at": "2025-01-02T03:04:05Z"}
    await shell.write(f"{test_mount.remote}/.svc-owner", json.dumps(foreign).encode())
    with pytest.raises(SyncError, match="ada@laptop"):
        await rsync_backend.sync(test_mount)
    await shell.write(f"{test_mount.remote}/.svc-owner", b"not json")
    with pytest.raises(SyncError, match="another machine"):
        await rsync_backend.sync(test_mount)
    assert (await rsync_backend.sync(test_mount, force=True)).files_transferred == 1


async def test_only_an_adopted_or_empty_directory_gets_the_owner_marker(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    await shell.write(f"{test_mount.remote}/theirs.txt", b"t")
    await rsync_backend.sync(test_mount)
    assert ".svc-owner" not in await shell.listing(test_mount.remote)  # copied, not claimed

    await rsync_backend.sync(test_mount, adopt=True)
    marker = json.loads(await shell.read(f"{test_mount.remote}/.svc-owner"))
    assert marker["machine_id"] == rsync_backend.machine_id
    assert "theirs.txt" in await shell.listing(test_mount.remote)  # adopting alone deletes nothing


@pytest.mark.parametrize("target", ["home", "root"])
async def test_a_remote_that_resolves_to_the_home_directory_or_root_is_never_synced(
    rsync_backend: RsyncBackend, tmp_path: Path, remote_base: str, shell: RemoteShell, target: str
) -> None:
    local = tmp_path / "local"
    write_tree(local, {"a.txt": "a"})
    home = str((await shell.run("pwd", "-P")).stdout).strip()
    link = f"{remote_base}-{target}-link"
    sentinel = f"{remote_base}-{target}-sentinel"  # a name in the home directory: a mirror there would delete it
    assert (await shell.run("ln", "-s", home if target == "home" else "/", link)).exit_status == 0
    assert (await shell.run("touch", sentinel)).exit_status == 0
    try:
        mount = Mount(name="home", local=str(local), remote=link)  # passes the static check: only a name
        for kwargs in ({}, {"delete": True, "adopt": True}, {"dry_run": True, "delete": True}):
            with pytest.raises(SyncError, match="your home directory on the cluster or a directory containing it"):
                await rsync_backend.sync(mount, **kwargs)
        # Other tests add and remove their own directories in the home directory meanwhile: look at ours.
        after = set(str((await shell.run("ls", "-A", home)).stdout).split())
        assert sentinel in after  # nothing deleted
        assert not {"a.txt", ".svc-owner", ".svc-manifest.json"} & after  # nothing written
    finally:
        await shell.run("rm", "-f", "--", link, sentinel)


_TAG: contextvars.ContextVar[str] = contextvars.ContextVar("tag", default="?")


class RecordingBackend(RsyncBackend):
    """Records when each rsync run starts and ends, tagged with the caller."""

    def __init__(self, *args: object, runs: list[tuple[str, float, float]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.runs = runs

    async def _run(self, argv: list[str], progress: Callable[[int], None] | None) -> Summary:
        start = time.monotonic()
        try:
            return await super()._run(argv, progress)
        finally:
            self.runs.append((_TAG.get(), start, time.monotonic()))


async def test_concurrent_syncs_of_one_mount_serialise(
    dev_ssh: DevSSH, test_mount: Mount, state_dir: Path, shell: RemoteShell
) -> None:
    local = Path(test_mount.local)
    write_tree(local, {f"f{i}.txt": str(i) for i in range(20)})
    runs: list[tuple[str, float, float]] = []
    transport = SSHTransport(PROFILE, dev_ssh.profile())
    first = RecordingBackend(PROFILE, dev_ssh.profile(), transport=transport, state_dir=state_dir, runs=runs)
    second = RecordingBackend(PROFILE, dev_ssh.profile(), transport=transport, state_dir=state_dir, runs=runs)

    async def tagged(tag: str, backend: RsyncBackend) -> SyncResult:
        _TAG.set(tag)
        return await backend.sync(test_mount, delete=True)

    try:
        results = await asyncio.gather(tagged("A", first), tagged("B", second))
    finally:
        await first.close()
        await second.close()
        await transport.close()
    assert sorted(r.files_transferred for r in results) == [0, 20]
    runs.sort(key=lambda run: run[1])
    tags = "".join(tag for tag, _, _ in runs)
    assert tags in ("AABB", "BBAA"), tags  # preflight + real run of one sync, then the other's
    for (_, _, end), (_, start, _) in itertools.pairwise(runs):
        assert end <= start
    assert user_entries(await shell.listing(test_mount.remote)) == {f"f{i}.txt" for i in range(20)}


async def test_lock_serialises_processes(rsync_backend: RsyncBackend, test_mount: Mount, state_dir: Path) -> None:
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    path = lock_path(state_dir, (PROFILE, test_mount.name))
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c",
        "import fcntl, select, sys\n"
        "f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True)\n"
        f"select.select([sys.stdin], [], [], {DEADLINE})",  # held until told (or, at the latest, the deadline)
        str(path), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdin is not None
    assert holder.stdout is not None
    assert await holder.stdout.readline() == b"held\n"
    sync = asyncio.create_task(rsync_backend.sync(test_mount))
    await asyncio.sleep(0.5)  # a sync that blocked this loop on the lock would hold this up to the deadline
    assert not sync.done()  # waiting for the other process, without blocking this loop
    holder.stdin.write(b"release\n")
    await holder.wait()
    result = await asyncio.wait_for(sync, timeout=60)
    assert result.files_transferred == 1


HOSTILE = [
    " leading space.txt",
    "   three leading",
    "with space.txt",
    "ünïcødé ✓.txt",
    "日本語/ファイル.txt",
    "a;b",
    "a|b",
    "a&b",
    "it's",
    'say "hi"',
    "back\\slash",
    "star*glob?[x]",
    "-dash-leading",
    "tab\tname",
    "new\nline",
    "\\#123 looks escaped",
    "trailing space ",
    "dir with space/$(id)/f;x",
]


async def test_hostile_names_sync_exactly_and_nothing_runs(
    rsync_backend: RsyncBackend, tmp_path: Path, remote_base: str, shell: RemoteShell
) -> None:
    pwned = Path(f"/tmp/pwned-{uuid.uuid4().hex[:12]}")
    names = [*HOSTILE, f"$(touch {pwned})", f"`touch {pwned}`", f"x; touch {pwned}"]
    local = tmp_path / "local"
    write_tree(local, {name: name for name in names})
    mount = Mount(name="hostile", local=str(local), remote=f"{remote_base}/we ird $(touch {pwned}); |'\"`x`")
    expected = {str(path.relative_to(local)) + ("/" if path.is_dir() else "") for path in local.rglob("*")}

    result = await rsync_backend.sync(mount)
    assert result.files_transferred == len(names)
    assert user_entries(await shell.listing(mount.remote)) == expected
    report = await rsync_backend.inspect(mount)
    assert (report.files_would_transfer, report.mirror_delete_candidates) == (0, 0)
    assert report.stale_uploads_known is True

    doomed = [" leading space.txt", "   three leading", f"$(touch {pwned})", "new\nline", "a|b"]
    for name in doomed:
        (local / name).unlink()
    stale = await rsync_backend.inspect(mount)
    assert sorted(stale.stale_upload_paths) == sorted(doomed)
    mirror = await rsync_backend.sync(mount, delete=True)
    assert sorted(mirror.deleted_paths) == sorted(doomed)  # leading spaces kept
    assert user_entries(await shell.listing(mount.remote)) == expected - set(doomed)
    assert not pwned.exists()


async def test_symlinked_manifest_is_refused_not_followed(
    rsync_backend: RsyncBackend, test_mount: Mount, remote_base: str, shell: RemoteShell
) -> None:
    local = Path(test_mount.local)
    write_tree(local, {"a.txt": "a"})
    await rsync_backend.sync(test_mount)
    target = f"{remote_base}/outside.json"
    await shell.write(target, b"precious")
    link = f"{test_mount.remote}/.svc-manifest.json"
    await shell.run("rm", "-f", "--", link)
    assert (await shell.run("ln", "-s", "../outside.json", link)).exit_status == 0

    (local / "b.txt").write_text("b")
    with pytest.raises(SyncError, match="symlink"):
        await rsync_backend.sync(test_mount)
    assert await shell.read(target) == b"precious"
    assert (await shell.run("test", "-L", link)).exit_status == 0
    assert "b.txt" not in await shell.listing(test_mount.remote)  # refused before transferring
    report = await rsync_backend.inspect(test_mount)
    assert report.stale_uploads_known is False
    assert report.stale_uploads_unknown_code is StaleUnknownReason.UNREADABLE_RECORD


async def test_max_paths_omits_lists_and_keeps_counts(rsync_backend: RsyncBackend, test_mount: Mount) -> None:
    local = Path(test_mount.local)
    write_tree(local, {"keep": "k", "s1": "1", "s2": "2", "s3": "3"})
    await rsync_backend.sync(test_mount)
    for name in ("s1", "s2", "s3"):
        (local / name).unlink()
    capped = await rsync_backend.inspect(test_mount, max_paths=2)
    assert (capped.stale_uploads, capped.stale_upload_paths, capped.stale_upload_paths_omitted) == (3, [], True)
    assert (capped.mirror_delete_candidates, capped.mirror_delete_candidate_paths_omitted) == (3, True)
    full = await rsync_backend.inspect(test_mount, max_paths=3)
    assert (full.stale_upload_paths, full.stale_upload_paths_omitted) == (["s1", "s2", "s3"], False)
    (local / "s1").write_text("back")
    (local / "s2").write_text("back")
    (local / "s3").write_text("back")
    empty = await rsync_backend.inspect(test_mount, max_paths=0)
    assert (empty.stale_uploads, empty.stale_upload_paths_omitted, empty.mirror_delete_candidate_paths_omitted) == (
        0,
        False,
        False,
    )
    with pytest.raises(SyncError, match="max_paths"):
        await rsync_backend.inspect(test_mount, max_paths=-1)


async def test_manifest_merges_across_syncs_and_forgets_mirrored_paths(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    local = Path(test_mount.local)
    write_tree(local, {"a.txt": "a"})
    await rsync_backend.sync(test_mount)
    (local / "a.txt").unlink()
    write_tree(local, {"b.txt": "b"})
    await rsync_backend.sync(test_mount)
    record = json.loads(await shell.read(f"{test_mount.remote}/.svc-manifest.json"))
    assert record["paths"] == ["a.txt", "b.txt"]
    assert (await rsync_backend.inspect(test_mount)).stale_upload_paths == ["a.txt"]
    await rsync_backend.sync(test_mount, delete=True)
    record = json.loads(await shell.read(f"{test_mount.remote}/.svc-manifest.json"))
    assert record["paths"] == ["b.txt"]
    assert (await rsync_backend.inspect(test_mount)).stale_uploads == 0


async def test_changed_exclude_filter_makes_stale_uploads_unknown(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    local = Path(test_mount.local)
    write_tree(local, {"a.txt": "a", "run.log": "l"})
    await rsync_backend.sync(test_mount)
    stricter = test_mount.model_copy(update={"exclude": ["*.log"]})
    report = await rsync_backend.inspect(stricter)
    assert report.stale_uploads_unknown_code is StaleUnknownReason.EXCLUDE_CHANGED
    assert "exclude" in report.stale_uploads_unknown_reason
    assert "*.log" in report.effective_exclude_patterns
    write_tree(local, {"new.log": "n"})
    await rsync_backend.sync(stricter)
    assert "new.log" not in await shell.listing(test_mount.remote)
    again = await rsync_backend.inspect(stricter)
    assert (again.stale_uploads_known, again.stale_uploads) == (True, 0)


async def test_excluded_data_folder_is_not_uploaded_nor_mirrored_away(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    """A mount's ``exclude`` and its project file's: ``data/`` stays local, the cluster's own ``data/`` stays."""
    local = Path(test_mount.local)
    write_tree(local, {"train.py": "t", "data/train.csv": "1,2", "data/deep/x.npy": "x", "out.ckpt": "w"})
    (local / ".svc.json").write_text(json.dumps({"exclude": ["*.ckpt"], "log_dir": "logs"}))
    trust_project(SvcPaths.from_env(), local)
    mount = test_mount.model_copy(update={"exclude": ["data/"]})
    result = await rsync_backend.sync(mount)
    assert result.files_transferred == 2  # train.py and .svc.json
    assert await shell.listing(mount.remote) == {"train.py", ".svc.json", ".svc-manifest.json", ".svc-owner"}
    report = await rsync_backend.inspect(mount)
    assert report.effective_exclude_patterns[-2:] == ["data/", "*.ckpt"]
    assert (report.files_would_transfer, report.stale_uploads_known) == (0, True)

    await shell.write(f"{mount.remote}/data/cluster-only.bin", b"job output")
    mirror = await rsync_backend.sync(mount, delete=True)
    assert mirror.entries_deleted == 0
    assert "data/cluster-only.bin" in await shell.listing(mount.remote)


async def test_an_untrusted_project_file_never_stops_a_sync_and_a_trusted_invalid_one_does(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    """Issue 26: a cloned repository's ``.svc.json`` decides nothing, not even that the sync fails."""
    local = Path(test_mount.local)
    write_tree(local, {"train.py": "t"})
    (local / ".svc.json").write_text(json.dumps({"exclude": "data/"}))
    trust.record(SvcPaths.from_env(), local / ".svc.json", (local / ".svc.json").read_bytes())  # as if trusted once
    with pytest.raises(ConfigError, match=r"\.svc\.json: exclude: must be a list of rsync patterns"):
        await rsync_backend.sync(test_mount)
    assert await shell.listing(test_mount.remote) == set()
    (local / ".svc.json").write_text(json.dumps({"exclude": ["train.py"]}))  # changed: untrusted, ignored
    assert (await rsync_backend.sync(test_mount)).files_transferred == 2
    assert {"train.py", ".svc.json"} <= await shell.listing(test_mount.remote)


async def test_foreign_owned_manifest_is_not_read(
    dev_ssh: DevSSH, rsync_backend: RsyncBackend, test_mount: Mount
) -> None:
    home = Path(pwd.getpwnam(dev_ssh.user).pw_dir) if dev_ssh.host in ("127.0.0.1", "localhost") else None
    if os.geteuid() != 0 or home is None:
        skip_or_fail("needs root on the loopback dev cluster to create a file owned by another account")
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    await rsync_backend.sync(test_mount)
    os.chown(home / test_mount.remote / ".svc-manifest.json", 0, 0)
    report = await rsync_backend.inspect(test_mount)
    assert report.stale_uploads_unknown_code is StaleUnknownReason.FOREIGN_RECORD
    assert "another account" in report.stale_uploads_unknown_reason


async def test_missing_rsync_names_the_side(dev_ssh: DevSSH, test_mount: Mount, state_dir: Path) -> None:
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    async with rsync_on(dev_ssh.profile(), state_dir=state_dir, rsync="/nonexistent/rsync") as local_missing:
        with pytest.raises(SyncError, match="not installed on this machine"):
            await local_missing.sync(test_mount)
    async with rsync_on(dev_ssh.profile(), state_dir=state_dir, remote_rsync="svc-no-such-rsync") as remote_missing:
        with pytest.raises(SyncError, match="cluster side"):
            await remote_missing.inspect(test_mount)


async def test_failing_rsync_reports_exit_code_and_stderr(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    # A local file where the cluster has a non-empty directory: rsync will not remove the directory.
    write_tree(Path(test_mount.local), {"d": "a file now"})
    await shell.write(f"{test_mount.remote}/d/job.txt", b"job output")
    with pytest.raises(SyncError) as failed:
        await rsync_backend.sync(test_mount)
    assert failed.value.exit_code == 23
    assert "(exit 23)" in str(failed.value)
    assert "rsync failed" in str(failed.value)
    assert "d" in failed.value.stderr_tail


async def test_directory_replaced_by_a_file_counts_as_deleted(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    local = Path(test_mount.local)
    write_tree(local, {"d/x": "x", "d/y": "y"})
    await rsync_backend.sync(test_mount)
    shutil.rmtree(local / "d")
    (local / "d").write_text("now a file")
    with pytest.raises(SyncError, match="3 entries"):
        await rsync_backend.sync(test_mount, delete=True, max_delete=2)
    result = await rsync_backend.sync(test_mount, delete=True, max_delete=3)
    assert sorted(result.deleted_paths) == ["d/", "d/x", "d/y"]
    assert user_entries(await shell.listing(test_mount.remote)) == {"d"}


async def test_key_and_known_hosts_paths_with_quotes_spaces_and_percent(
    dev_ssh: DevSSH, test_mount: Mount, tmp_path: Path, state_dir: Path, shell: RemoteShell
) -> None:
    odd = tmp_path / "it's a %d key dir"
    odd.mkdir()
    key = odd / "id key"
    shutil.copyfile(dev_ssh.key, key)
    key.chmod(0o600)
    known = odd / "known hosts"
    shutil.copyfile(dev_ssh.known_hosts, known)
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    async with rsync_on(dev_ssh.profile(key_filename=str(key), known_hosts=str(known)), state_dir=state_dir) as backend:
        assert (await backend.sync(test_mount)).files_transferred == 1
    assert "a.txt" in await shell.listing(test_mount.remote)


async def test_progress_counts_files_and_inspect_creates_nothing(
    rsync_backend: RsyncBackend, test_mount: Mount, shell: RemoteShell
) -> None:
    write_tree(Path(test_mount.local), {f"d/f{i}": str(i) for i in range(5)})
    report = await rsync_backend.inspect(test_mount)
    assert report.files_would_transfer == 5
    assert await shell.listing(test_mount.remote) == set()
    seen: list[int] = []
    await rsync_backend.sync(test_mount, progress=seen.append)
    assert seen == [1, 2, 3, 4, 5]


async def test_unknown_host_key_is_rejected(dev_ssh: DevSSH, test_mount: Mount, tmp_path: Path) -> None:
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    async with rsync_on(dev_ssh.profile(known_hosts=str(empty)), state_dir=tmp_path / "s") as backend:
        with pytest.raises(SyncError, match="host key"):
            await backend.sync(test_mount)


async def test_dropped_connection_is_reopened(dev_ssh: DevSSH, state_dir: Path, test_mount: Mount) -> None:
    """svc's files go over the profile's transport's one connection: dropped (as an idle timeout would), it is
    opened again by the next sync."""
    write_tree(Path(test_mount.local), {"a.txt": "a"})
    async with rsync_on(dev_ssh.profile(), state_dir=state_dir) as backend:
        await backend.sync(test_mount)
        transport = backend._files.transport
        assert isinstance(transport, SSHTransport)
        conn = await transport.connection()
        conn.abort()
        (Path(test_mount.local) / "b.txt").write_text("b")
        assert (await backend.sync(test_mount)).files_transferred == 1
        assert await transport.connection() is not conn


async def test_rsync_and_asyncssh_trust_the_same_known_hosts_and_key(
    dev_ssh: DevSSH, home: Path, tmp_path: Path, remote_base: str, shell: RemoteShell, state_dir: Path
) -> None:
    # Only $HOME/.ssh knows the cluster (as for a service whose HOME is not its passwd home directory).
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir(mode=0o700)
    shutil.copy(dev_ssh.known_hosts, ssh_dir / "known_hosts")
    shutil.copy(dev_ssh.key, ssh_dir / "id_ed25519")
    (ssh_dir / "id_ed25519").chmod(0o600)
    assert pwd.getpwuid(os.getuid()).pw_dir != str(home)
    profile = SSHProfile(hostname=dev_ssh.host, port=dev_ssh.port, username=dev_ssh.user)
    local = tmp_path / "local"
    write_tree(local, {"a.txt": "a"})
    async with rsync_on(profile, state_dir=state_dir) as backend:
        result = await backend.sync(Mount(name="m", local=str(local), remote=f"{remote_base}/m"))
    assert result.files_transferred == 1
    assert "a.txt" in await shell.listing(f"{remote_base}/m")
