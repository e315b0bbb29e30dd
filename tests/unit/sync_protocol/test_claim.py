"""``claim_mount``: one decision for claim, adopt, force and the login directory, refusals named by ``remedy``."""

from __future__ import annotations

from typing import Any

import pytest

from svc_host.plugin import FileState, FoundFile, OwnerMarker, SyncError, claim_mount

OURS = FoundFile(FileState.OK, data=OwnerMarker.new("m1").dump())
THEIRS = FoundFile(FileState.OK, data=OwnerMarker.new("m2").dump())
NONE = FoundFile(FileState.MISSING)


def claim(marker: FoundFile = NONE, *, entries: list[str] | None = None, **flags: Any) -> bool:
    where = {"real_remote": "/home/ada/proj", "home": "/home/ada"} | {
        key: flags.pop(key) for key in ("real_remote", "home") if key in flags
    }
    return claim_mount(
        profile="dev", mount="proj", remote="proj", marker=marker, entries=entries, machine="m1", **where, **flags
    )


def test_an_empty_or_missing_directory_is_claimed_and_ours_is_kept() -> None:
    assert claim(entries=None) is True
    assert claim(entries=[]) is True
    assert claim(entries=[".svc-manifest.json", ".svc-owner.tmp-abc"]) is True  # svc's own leftovers only
    assert claim(OURS, entries=["a"]) is False  # nothing to write


@pytest.mark.parametrize("marker", [THEIRS, FoundFile(FileState.OK, data=b"garbage"), FoundFile(FileState.FOREIGN)])
def test_another_machines_or_an_unreadable_marker_needs_force(marker: FoundFile) -> None:
    cases: list[dict[str, Any]] = [{}, {"dry_run": True}, {"adopt": True}]
    for flags in cases:
        with pytest.raises(SyncError) as refused:
            claim(marker, entries=["a"], **flags)
        assert refused.value.remedy == "force"
    assert claim(marker, entries=["a"], force=True) is True  # forcing moves the claim here


def test_a_symlinked_marker_needs_force() -> None:
    with pytest.raises(SyncError) as refused:
        claim(FoundFile(FileState.SYMLINK))
    assert refused.value.remedy == "force"
    assert claim(FoundFile(FileState.SYMLINK), force=True) is True


def test_someones_files_are_copied_into_unclaimed_and_mirrored_only_once_adopted() -> None:
    assert claim(entries=["data"]) is False  # additive: copies, claims nothing
    assert claim(entries=["data"], delete=True, dry_run=True) is False  # a preview changes nothing
    with pytest.raises(SyncError) as refused:
        claim(entries=["data", "notes.txt"], delete=True)
    assert refused.value.remedy == "adopt"
    assert "holds 2 entries ('data', 'notes.txt')" in str(refused.value)
    assert claim(entries=["data"], delete=True, adopt=True) is True


@pytest.mark.parametrize("real", ["/home/ada", "/home", "/"])
def test_the_login_directory_and_above_are_never_synced(real: str) -> None:
    cases: list[tuple[FoundFile, dict[str, Any]]] = [
        (NONE, {}),
        (OURS, {}),
        (THEIRS, {"force": True}),
        (NONE, {"adopt": True}),
    ]
    for marker, flags in cases:
        with pytest.raises(SyncError, match="your home directory on the cluster") as refused:
            claim(marker, real_remote=real, **flags)
        assert refused.value.remedy is None
    assert claim(real_remote="/home/ada2") is True  # a sibling sharing the prefix is not the home directory
