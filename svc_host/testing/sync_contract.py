"""``SyncBackendContract``: the behaviour every sync backend must show against a real remote.

Subclass it in a test module and provide four fixtures::

    class TestMyBackend(SyncBackendContract):
        @pytest.fixture
        async def backend(self):
            async with profile_transport("dev", profile) as transport:  # the transport svc would give it
                backend = MyBackend("dev", profile, transport=transport)
                yield backend
                await backend.close()

        @pytest.fixture
        def mount(self, tmp_path):
            # local: a fresh empty directory; remote: a fresh directory that does not exist yet
            return Mount(name="contract", local=str(tmp_path / "local"), remote=f"svc-test-{uuid.uuid4().hex}")

        @pytest.fixture
        def remote_listing(self):
            async def listing() -> set[str]: ...   # every entry under mount.remote, relative, dirs ending in "/"
            return listing                          # (an empty set while the directory does not exist)

        @pytest.fixture
        def remote_write(self):
            async def write(relative_path: str, data: bytes) -> None: ...  # as a job on the cluster would
            return write

The local directory of ``mount`` must exist and be empty; the suite fills it. Refusals are matched on
``SyncError.remedy`` and on what changed, never on a message's wording. The suite points ``XDG_CONFIG_HOME`` at a
directory of its own while it trusts a project file (``svc config trust``), so your own trust list is not touched.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from svc_host.domain.profiles import Mount
from svc_host.errors import SyncError
from svc_host.settings.config import trust_project
from svc_host.settings.paths import SvcPaths
from svc_host.transports.sync_backend import StaleUnknownReason, SyncBackend
from svc_host.transports.sync_excludes import MANIFEST_FILE, OWNER_FILE
from svc_host.transports.sync_files import OwnerMarker

Listing = Callable[[], Awaitable[set[str]]]
Writer = Callable[[str, bytes], Awaitable[None]]

MANIFEST = MANIFEST_FILE
SVC_FILES = frozenset({MANIFEST_FILE, OWNER_FILE})
"""Files svc keeps at the root of every remote mount directory."""


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Create ``files`` (relative path -> text) under ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def user_entries(listing: set[str]) -> set[str]:
    """A remote listing without svc's own files."""
    return {entry for entry in listing if entry not in SVC_FILES}


class SyncBackendContract:
    """Real-remote checks shared by ``rsync`` and any third-party sync backend."""

    @pytest.fixture
    def backend(self) -> SyncBackend:
        raise NotImplementedError("provide a `backend` fixture: the SyncBackend under test")

    @pytest.fixture
    def mount(self) -> Mount:
        raise NotImplementedError("provide a `mount` fixture: fresh empty local dir, fresh remote dir")

    @pytest.fixture
    def remote_listing(self) -> Listing:
        raise NotImplementedError("provide a `remote_listing` fixture: async () -> set of remote relative paths")

    @pytest.fixture
    def remote_write(self) -> Writer:
        raise NotImplementedError("provide a `remote_write` fixture: async (relative path, bytes) -> None")

    @pytest.fixture
    def local(self, mount: Mount) -> Path:
        return Path(mount.local)

    async def test_additive_sync_uploads_and_never_deletes(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing, remote_write: Writer
    ) -> None:
        write_tree(local, {"a.txt": "a", "sub/b.txt": "b", "sub/deeper/c.txt": "c"})
        result = await backend.sync(mount)
        assert (result.dry_run, result.delete, result.mirror_candidates_inspected) == (False, False, False)
        assert result.files_transferred == 3
        assert result.entries_deleted == 0
        assert (result.mount, result.local, result.remote) == (mount.name, mount.local, mount.remote)
        uploaded = {"a.txt", "sub/", "sub/b.txt", "sub/deeper/", "sub/deeper/c.txt"}
        assert user_entries(await remote_listing()) == uploaded

        await remote_write("job-output.log", b"written by a job")
        shutil.rmtree(local / "sub")
        again = await backend.sync(mount)
        assert again.files_transferred == 0
        assert again.entries_deleted == 0
        assert user_entries(await remote_listing()) == uploaded | {"job-output.log"}

    async def test_user_excludes_are_never_uploaded_nor_mirrored_away(
        self,
        backend: SyncBackend,
        mount: Mount,
        local: Path,
        remote_listing: Listing,
        remote_write: Writer,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """The mount's ``exclude`` and its project file's once trusted (``user_excludes``) count, and the
        inspection says so; an untrusted project file's ``exclude`` spares nothing (issue 26)."""
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "sync-contract-config"))
        write_tree(
            local, {"train.py": "t", "data/big.bin": "x", "run.ckpt": "w", ".svc.json": '{"exclude": ["*.ckpt"]}'}
        )
        excluding = mount.model_copy(update={"exclude": ["data/"]})
        untrusted = await backend.inspect(excluding)
        assert "data/" in untrusted.effective_exclude_patterns
        assert "*.ckpt" not in untrusted.effective_exclude_patterns
        assert untrusted.files_would_transfer == 3  # run.ckpt too
        trust_project(SvcPaths.from_env(), local)
        result = await backend.sync(excluding)
        assert result.files_transferred == 2  # train.py and .svc.json
        assert user_entries(await remote_listing()) == {"train.py", ".svc.json"}
        report = await backend.inspect(excluding)
        assert {"data/", "*.ckpt"} <= set(report.effective_exclude_patterns)
        await remote_write("data/from-a-job.bin", b"job output")
        await remote_write("old.ckpt", b"job output")
        mirror = await backend.sync(excluding, delete=True)
        assert mirror.entries_deleted == 0
        assert {"data/from-a-job.bin", "old.ckpt"} <= await remote_listing()

    async def test_dry_run_changes_nothing(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing
    ) -> None:
        write_tree(local, {"one.txt": "1", "dir/two.txt": "2"})
        result = await backend.sync(mount, dry_run=True)
        assert result.dry_run is True
        assert result.files_transferred == 2
        assert await remote_listing() == set()  # not even svc's own files
        report = await backend.inspect(mount)
        assert report.stale_uploads_known is False
        assert report.stale_uploads_unknown_code is StaleUnknownReason.NO_RECORD

        await backend.sync(mount)
        before = await remote_listing()
        (local / "one.txt").unlink()
        mirror = await backend.sync(mount, dry_run=True, delete=True)
        assert (mirror.dry_run, mirror.mirror_candidates_inspected) == (True, True)
        assert mirror.entries_deleted == 1
        assert mirror.deleted_paths == ["one.txt"]
        assert await remote_listing() == before

    async def test_mirror_deletes_exactly_the_extra_entries(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing, remote_write: Writer
    ) -> None:
        write_tree(local, {"keep.txt": "k", "gone/x.txt": "x", "gone/y.txt": "y", "old.txt": "o"})
        await backend.sync(mount)
        await remote_write("job/out.log", b"job output")
        shutil.rmtree(local / "gone")
        (local / "old.txt").unlink()
        result = await backend.sync(mount, delete=True)
        expected = {"gone/", "gone/x.txt", "gone/y.txt", "old.txt", "job/", "job/out.log"}
        assert result.mirror_candidates_inspected is True
        assert result.entries_deleted == len(expected)
        assert sorted(result.deleted_paths) == sorted(expected)
        assert result.deleted_paths_omitted is False
        assert user_entries(await remote_listing()) == {"keep.txt"}

    async def test_mirror_past_max_delete_is_refused_and_changes_nothing(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing
    ) -> None:
        write_tree(local, {"d/one.txt": "1", "d/two.txt": "2", "stay.txt": "s"})
        await backend.sync(mount)
        before = await remote_listing()
        shutil.rmtree(local / "d")
        (local / "new.txt").write_text("not uploaded by a refused mirror")
        # A directory holding two files counts three entries.
        with pytest.raises(SyncError) as refused:
            await backend.sync(mount, delete=True, max_delete=2)
        assert refused.value.remedy is None  # no flag but a higher max_delete lets it through
        assert await remote_listing() == before
        result = await backend.sync(mount, delete=True, max_delete=3)
        assert result.entries_deleted == 3
        assert user_entries(await remote_listing()) == {"stay.txt", "new.txt"}

    @pytest.mark.parametrize("max_delete", [0, -1])
    async def test_max_delete_below_one_is_rejected(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing, max_delete: int
    ) -> None:
        write_tree(local, {"a.txt": "a"})
        with pytest.raises(SyncError):
            await backend.sync(mount, delete=True, max_delete=max_delete)
        assert await remote_listing() == set()

    async def test_manifest_records_uploads_and_inspect_reports_stale_ones(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing, remote_write: Writer
    ) -> None:
        write_tree(local, {"a.txt": "a", "b.txt": "b"})
        first = await backend.inspect(mount)
        assert first.stale_uploads_known is False
        assert first.stale_uploads == 0
        assert first.stale_uploads_unknown_reason
        assert first.files_would_transfer == 2
        assert await remote_listing() == set()  # inspect is read-only

        await backend.sync(mount)
        assert MANIFEST in await remote_listing()
        clean = await backend.inspect(mount)
        assert (clean.stale_uploads_known, clean.stale_uploads, clean.stale_uploads_unknown_reason) == (True, 0, "")
        assert clean.files_would_transfer == 0

        (local / "a.txt").unlink()
        await remote_write("result.csv", b"job output")
        report = await backend.inspect(mount)
        assert report.stale_uploads_known is True
        assert report.stale_upload_paths == ["a.txt"]
        assert report.stale_uploads == 1
        assert sorted(report.mirror_delete_candidate_paths) == ["a.txt", "result.csv"]
        assert report.mirror_delete_candidates == 2

    async def test_excluded_paths_are_never_uploaded_nor_deleted(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing, remote_write: Writer
    ) -> None:
        write_tree(
            local,
            {
                "keep.py": "k",
                ".git/HEAD": "ref",
                "x.pyc": "c",
                "pkg/__pycache__/m.cpython-311.pyc": "c",
                "node_modules/p/index.js": "j",
            },
        )
        await remote_write(".git/remote-only", b"r")
        await remote_write("old.pyc", b"r")
        result = await backend.sync(mount, delete=True, adopt=True)  # files were there before svc
        assert result.entries_deleted == 0
        entries = user_entries(await remote_listing())
        assert entries == {"keep.py", "pkg/", ".git/", ".git/remote-only", "old.pyc"}
        report = await backend.inspect(mount)
        assert report.mirror_delete_candidates == 0
        assert {".git/", "*.pyc", "__pycache__/", "node_modules/"} <= set(report.effective_exclude_patterns)

    async def test_first_mirror_into_a_directory_svc_never_synced_needs_adopt(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing, remote_write: Writer
    ) -> None:
        write_tree(local, {"code.py": "c"})
        await remote_write("precious/data.bin", b"someone's data")
        await remote_write("notes.txt", b"n")
        before = await remote_listing()
        with pytest.raises(SyncError) as refused:
            await backend.sync(mount, delete=True)
        assert refused.value.remedy == "adopt"
        assert await remote_listing() == before
        preview = await backend.sync(mount, delete=True, dry_run=True)  # a dry run changes nothing: allowed
        assert preview.entries_deleted == 3

        await backend.sync(mount)  # additive: copies, but does not claim someone's directory
        assert user_entries(await remote_listing()) == {"code.py", "notes.txt", "precious/", "precious/data.bin"}
        with pytest.raises(SyncError) as again:
            await backend.sync(mount, delete=True)
        assert again.value.remedy == "adopt"

        adopted = await backend.sync(mount, delete=True, adopt=True)
        assert adopted.entries_deleted == 3
        assert user_entries(await remote_listing()) == {"code.py"}
        (local / "more.py").write_text("m")
        assert (await backend.sync(mount, delete=True)).files_transferred == 1  # claimed now: no adopt needed

    async def test_another_machines_mount_is_refused_unless_forced(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing, remote_write: Writer
    ) -> None:
        """The owner marker in svc's format (``OwnerMarker``): a mount another machine claimed is refused with
        ``remedy == "force"``, changing nothing; forcing takes the claim over, later syncs need no force."""
        write_tree(local, {"a.txt": "a"})
        theirs = OwnerMarker(machine_id="f" * 32, hostname="laptop", user="ada", claimed_at="2025-01-02T03:04:05Z")
        await remote_write(OWNER_FILE, theirs.dump())
        for dry_run in (False, True):
            with pytest.raises(SyncError) as refused:
                await backend.sync(mount, dry_run=dry_run)
            assert refused.value.remedy == "force"
        assert user_entries(await remote_listing()) == set()
        assert (await backend.sync(mount, force=True)).files_transferred == 1
        (local / "b.txt").write_text("b")
        assert (await backend.sync(mount, delete=True)).files_transferred == 1  # the claim is ours now

    async def test_lock_is_reentrant_for_its_holder(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_listing: Listing
    ) -> None:
        """The holder syncs without waiting, and so does a task it creates while holding the lock (the rule of
        ``sync_lock``: asyncio copies the creating task's context; on Python 3.11 ``wait_for`` makes such a task)."""
        write_tree(local, {"a.txt": "a"})
        async with backend.lock(mount):
            result = await asyncio.wait_for(backend.sync(mount), timeout=60)
            (local / "b.txt").write_text("b")
            spawned = await asyncio.wait_for(asyncio.create_task(backend.sync(mount)), timeout=60)
        assert (result.files_transferred, spawned.files_transferred) == (1, 1)
        assert {"a.txt", "b.txt"} <= await remote_listing()

    async def test_inspect_caps_lists_without_shortening_counts(
        self, backend: SyncBackend, mount: Mount, local: Path, remote_write: Writer
    ) -> None:
        write_tree(local, {"a.txt": "a"})
        await backend.sync(mount)
        for name in ("x1", "x2", "x3"):
            await remote_write(name, b"job")
        capped = await backend.inspect(mount, max_paths=2)
        assert capped.mirror_delete_candidates == 3
        assert capped.mirror_delete_candidate_paths == []
        assert capped.mirror_delete_candidate_paths_omitted is True
        full = await backend.inspect(mount, max_paths=3)
        assert sorted(full.mirror_delete_candidate_paths) == ["x1", "x2", "x3"]
        assert full.mirror_delete_candidate_paths_omitted is False

    async def test_missing_local_directory_is_an_error(self, backend: SyncBackend, mount: Mount) -> None:
        missing = mount.model_copy(update={"local": str(Path(mount.local) / "does-not-exist")})
        with pytest.raises(SyncError, match="does-not-exist"):
            await backend.sync(missing)
        with pytest.raises(SyncError, match="does-not-exist"):
            await backend.inspect(missing)
