"""The owner marker ``<mount.remote>/.svc-owner``: which machine syncs a mount.

Two machines mirroring into one remote directory would delete each other's files, so the first machine
to sync a mount claims it; a sync from any other machine is refused unless forced (which moves the claim).
A directory that already holds files and no marker is someone's data, not svc's: it is claimed only when
the user adopts it explicitly, and a mirror into it is refused until then (a mirror deletes what is not
local, and a mistyped remote could name a home directory).
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import os
import socket
import uuid
from collections.abc import Iterable
from datetime import datetime
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from svc_plugin_rsync.excludes import MANIFEST_NAME, OWNER_NAME, TEMP_SUFFIX

MACHINE_ID_FILE = Path("/etc/machine-id")
_APP_KEY = b"svc-owner-v1"


def default_state_dir() -> Path:
    """svc's per-user state directory: ``$XDG_STATE_HOME/svc``, by default ``~/.local/state/svc``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "svc"


def machine_id(state_dir: Path, *, system_file: Path = MACHINE_ID_FILE) -> str:
    """A stable id of this machine, safe to store on a shared cluster.

    Derived from ``/etc/machine-id`` through a keyed hash (the raw id is meant to stay private), else
    from ``<state_dir>/machine-id``, created once as ``<hostname>-<random uuid>``.
    """
    try:
        raw = system_file.read_text().strip()
    except OSError:
        raw = ""
    if not raw:
        stored = state_dir / "machine-id"
        try:
            raw = stored.read_text().strip()
        except FileNotFoundError:
            raw = ""
        if not raw:
            raw = f"{socket.gethostname()}-{uuid.uuid4().hex}"
            state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = stored.with_name(f"machine-id.tmp-{uuid.uuid4().hex}")
            tmp.write_text(raw + "\n")
            os.replace(tmp, stored)
    return hmac.new(_APP_KEY, raw.encode(), hashlib.sha256).hexdigest()[:32]


class OwnerMarker(BaseModel):
    """Contents of ``.svc-owner``; ``hostname`` and ``user`` are for the people reading a refusal."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    machine_id: str
    hostname: str = ""
    user: str = ""
    claimed_at: datetime

    def describe(self) -> str:
        who = f"{self.user}@{self.hostname}" if self.user else self.hostname or "another machine"
        return f"{who} (machine {self.machine_id[:12]}, since {self.claimed_at:%Y-%m-%d %H:%M} UTC)"


def new_marker(machine: str, now: datetime) -> OwnerMarker:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = ""
    return OwnerMarker(machine_id=machine, hostname=socket.gethostname(), user=user, claimed_at=now)


def parse_marker(data: bytes) -> OwnerMarker | None:
    """The marker in ``data``, or None when it is not one."""
    try:
        return OwnerMarker.model_validate(json.loads(data))
    except (ValueError, ValidationError):
        return None


def dump_marker(marker: OwnerMarker) -> bytes:
    return (json.dumps(marker.model_dump(mode="json"), indent=1) + "\n").encode()


class Claim(Enum):
    """What a sync must do about the marker it found."""

    CLAIM = "claim"
    """No marker: write ours."""
    OURS = "ours"
    """Ours already: nothing to do."""
    FOREIGN = "foreign"
    """Another machine's, or a marker svc cannot read: refuse unless forced."""


def decide(marker: OwnerMarker | None, *, present: bool, machine: str) -> Claim:
    """Compare the marker found (``present`` but None: unreadable or not ours to read) with ``machine``."""
    if not present:
        return Claim.CLAIM
    if marker is not None and marker.machine_id == machine:
        return Claim.OURS
    return Claim.FOREIGN


def unclaimed_entries(names: Iterable[str]) -> list[str]:
    """The names in a mount's remote directory that svc did not write itself (marker, manifest, their temp files)."""
    own = (OWNER_NAME, MANIFEST_NAME)
    return sorted(name for name in names if not any(name == o or name.startswith(o + TEMP_SUFFIX) for o in own))


def is_home_or_above(real: str, home: str) -> bool:
    """True when the resolved remote directory ``real`` is the login directory ``home``, ``/``, or above it."""
    return real in ("/", home) or home.startswith(real.rstrip("/") + "/")
