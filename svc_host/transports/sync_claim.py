"""Who may sync into a mount's remote directory: the claim, ``adopt`` and ``force`` rules as one function (pure).

Two machines mirroring into one remote directory would delete each other's files, so the first machine to sync
a mount claims it (``.svc-owner``); a sync from any other machine is refused unless forced, which moves the
claim. A directory that already holds files and no marker is someone's data, not svc's: it is claimed only when
the user adopts it, and a mirror into it is refused until then (a mirror deletes what is not local, and a
mistyped remote could name a home directory). A remote that resolves to the login directory, ``/`` or a
directory above the login directory is never synced.
"""

from __future__ import annotations

from collections.abc import Sequence

from svc_host.errors import SyncError
from svc_host.transports.sync_excludes import MANIFEST_FILE, OWNER_FILE, TEMP_SUFFIX
from svc_host.transports.sync_files import FileState, FoundFile, OwnerMarker

CLAIM_LISTING_LIMIT = 1000
"""How many names of the remote directory ``claim_mount`` needs at most (a backend may list no more)."""


def claim_mount(
    *,
    profile: str,
    mount: str,
    remote: str,
    marker: FoundFile,
    entries: Sequence[str] | None,
    real_remote: str | None,
    home: str | None,
    machine: str,
    force: bool = False,
    adopt: bool = False,
    delete: bool = False,
    dry_run: bool = False,
) -> bool:
    """Decide, before a sync of ``mount`` changes anything, whether it may go on; True when it writes this
    machine's marker (``OwnerMarker.new(machine)``) once it does change something.

    The backend gives what it found in the remote directory ``remote``: the ``marker`` file, up to
    ``CLAIM_LISTING_LIMIT`` of its ``entries`` (``None``: no such directory), where the directory resolves to
    with symlinks followed (``real_remote``, ``None`` when it does not exist) and the login directory ``home``
    resolved the same way. Refusals are ``SyncError``s whose ``remedy`` names the flag that would let the same
    sync through: ``"force"`` (another machine's or an unreadable marker), ``"adopt"`` (a mirror into a
    directory holding files svc never synced); the login directory has none.
    """
    where = f"mount {mount!r} of profile {profile!r}"
    if marker.state is FileState.SYMLINK and not force:
        raise SyncError(
            f"{where}: the owner marker {OWNER_FILE} on the cluster is a symlink, which svc does not follow; "
            "remove it, or pass force=True to replace it",
            remedy="force",
        )
    found = OwnerMarker.parse(marker.data) if marker.state is FileState.OK else None
    present = marker.state is not FileState.MISSING
    ours = found is not None and found.machine_id == machine
    if present and not ours and not force:
        who = found.describe() if found is not None else f"unknown ({marker.state.value}: {marker.detail})"
        raise SyncError(
            f"{where} is synced from another machine: {who}; sync from that machine, or pass force=True "
            "to take the mount over from this one",
            remedy="force",
        )
    if real_remote is not None and home is not None and _is_home_or_above(real_remote, home):
        raise SyncError(
            f"{where}: the cluster directory {remote!r} is {real_remote!r}, your home directory on the cluster or "
            "a directory containing it; svc never syncs there, set the mount's remote to a project directory "
            "below it"
        )
    if present:
        return not ours
    if adopt:
        return True
    unclaimed = unclaimed_entries(entries or [])
    if unclaimed and delete and not dry_run:
        count = f"at least {len(unclaimed)}" if len(unclaimed) >= CLAIM_LISTING_LIMIT else str(len(unclaimed))
        shown = ", ".join(repr(name) for name in unclaimed[:5]) + (", ..." if len(unclaimed) > 5 else "")
        raise SyncError(
            f"mirror of mount {mount!r} refused, nothing changed: the cluster directory {remote!r} already "
            f"holds {count} entries ({shown}) and svc has never synced it (no {OWNER_FILE} marker), so a mirror "
            "would delete whatever is not in the local directory. If it is the right directory, adopt it: "
            '"adopt": true in POST /api/files/mirror (or /api/files/sync), adopt=true for sync_files, or '
            "`svc sync --adopt`; or sync without delete",
            remedy="adopt",
        )
    return not unclaimed  # an additive sync copies into someone's directory without claiming it


def unclaimed_entries(names: Sequence[str]) -> list[str]:
    """The names in a mount's remote directory that svc did not write itself (marker, record, their temp files)."""
    own = (OWNER_FILE, MANIFEST_FILE)
    return sorted(name for name in names if not any(name == o or name.startswith(o + TEMP_SUFFIX) for o in own))


def _is_home_or_above(real: str, home: str) -> bool:
    return real in ("/", home) or home.startswith(real.rstrip("/") + "/")
