"""Machine id and the owner-marker decision."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from svc_plugin_rsync.owner import Claim, OwnerMarker, decide, dump_marker, machine_id, new_marker, parse_marker

NOW = datetime(2025, 5, 1, tzinfo=UTC)


def test_machine_id_derives_from_system_id_without_revealing_it(tmp_path: Path) -> None:
    system = tmp_path / "machine-id"
    system.write_text("3d1219c7c4c5404aaa1f6d2a48adfda4\n")
    first = machine_id(tmp_path / "state", system_file=system)
    assert first == machine_id(tmp_path / "other", system_file=system)
    assert "3d1219c7" not in first
    assert not (tmp_path / "state").exists()


def test_machine_id_without_system_id_is_generated_once(tmp_path: Path) -> None:
    missing = tmp_path / "no-machine-id"
    state = tmp_path / "state"
    first = machine_id(state, system_file=missing)
    assert (state / "machine-id").read_text().strip()
    assert machine_id(state, system_file=missing) == first
    assert machine_id(tmp_path / "elsewhere", system_file=missing) != first


def test_marker_round_trip_and_garbage() -> None:
    marker = new_marker("m1", NOW)
    assert parse_marker(dump_marker(marker)) == marker
    assert parse_marker(b"not json") is None
    assert parse_marker(b'{"hostname": "x"}') is None


def test_decide() -> None:
    ours = OwnerMarker(machine_id="m1", claimed_at=NOW)
    assert decide(None, present=False, machine="m1") is Claim.CLAIM
    assert decide(ours, present=True, machine="m1") is Claim.OURS
    assert decide(ours, present=True, machine="m2") is Claim.FOREIGN
    assert decide(None, present=True, machine="m1") is Claim.FOREIGN  # unreadable: not known to be ours


def test_describe_names_who_holds_the_mount() -> None:
    marker = OwnerMarker(machine_id="abcdef0123456789", hostname="laptop", user="ada", claimed_at=NOW)
    assert marker.describe() == "ada@laptop (machine abcdef012345, since 2025-05-01 00:00 UTC)"
