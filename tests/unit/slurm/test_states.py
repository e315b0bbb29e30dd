"""The one state table: every Slurm spelling lands on one canonical state."""

from __future__ import annotations

import pytest

from svc_host.domain.jobs import JobState
from svc_host.errors import SlurmParseError
from svc_host.slurm.states import SLURM_STATES, normalize_state, parse_exit_code

# Slurm's job states as squeue's man page lists them: (short code, long name).
SLURM_JOB_STATES = [
    ("BF", "BOOT_FAIL"),
    ("CA", "CANCELLED"),
    ("CD", "COMPLETED"),
    ("CF", "CONFIGURING"),
    ("CG", "COMPLETING"),
    ("DL", "DEADLINE"),
    ("F", "FAILED"),
    ("NF", "NODE_FAIL"),
    ("OOM", "OUT_OF_MEMORY"),
    ("PD", "PENDING"),
    ("PR", "PREEMPTED"),
    ("R", "RUNNING"),
    ("RD", "RESV_DEL_HOLD"),
    ("RF", "REQUEUE_FED"),
    ("RH", "REQUEUE_HOLD"),
    ("RQ", "REQUEUED"),
    ("RS", "RESIZING"),
    ("RV", "REVOKED"),
    ("SI", "SIGNALING"),
    ("SE", "SPECIAL_EXIT"),
    ("SO", "STAGE_OUT"),
    ("ST", "STOPPED"),
    ("S", "SUSPENDED"),
    ("TO", "TIMEOUT"),
]


@pytest.mark.parametrize(("code", "name"), SLURM_JOB_STATES)
def test_short_code_and_long_name_agree_and_are_known(code: str, name: str) -> None:
    assert normalize_state(code) is normalize_state(name)
    assert normalize_state(name) is not JobState.UNKNOWN


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("PENDING", JobState.PENDING),
        ("RUNNING", JobState.RUNNING),
        ("COMPLETED", JobState.COMPLETED),
        ("FAILED", JobState.FAILED),
        ("TIMEOUT", JobState.TIMEOUT),
        ("OUT_OF_MEMORY", JobState.OUT_OF_MEMORY),
        ("NODE_FAIL", JobState.NODE_FAIL),
        ("PREEMPTED", JobState.PREEMPTED),
        ("BOOT_FAIL", JobState.BOOT_FAIL),
        ("DEADLINE", JobState.DEADLINE),
        ("SUSPENDED", JobState.SUSPENDED),
        # The choices documented in svc_host.slurm.states:
        ("COMPLETING", JobState.RUNNING),
        ("CONFIGURING", JobState.PENDING),
        ("REQUEUED", JobState.PENDING),
        ("REQUEUE_HOLD", JobState.PENDING),
        ("REQUEUE_FED", JobState.PENDING),
        ("RESV_DEL_HOLD", JobState.PENDING),
        ("RESIZING", JobState.RUNNING),
        ("SIGNALING", JobState.RUNNING),
        ("STAGE_OUT", JobState.RUNNING),
        ("UPDATE_DB", JobState.RUNNING),
        ("STOPPED", JobState.SUSPENDED),
        ("SPECIAL_EXIT", JobState.FAILED),
        ("REVOKED", JobState.CANCELLED),
    ],
)
def test_long_names(raw: str, expected: JobState) -> None:
    assert normalize_state(raw) is expected


@pytest.mark.parametrize(
    "raw",
    ["CANCELLED by 1001", "CANCELLED by 0", "CANCELLED+", "cancelled", "  CA\n", "Cancelled By 1001", "ca+"],
)
def test_cancelled_spellings(raw: str) -> None:
    assert normalize_state(raw) is JobState.CANCELLED


@pytest.mark.parametrize("raw", ["", "   ", "BOGUS", "RUNNING_LATE", "R2", "+", "by 1001"])
def test_unknown_strings_are_unknown(raw: str) -> None:
    assert normalize_state(raw) is JobState.UNKNOWN


def test_only_completing_like_states_are_live_and_failures_are_terminal() -> None:
    assert not normalize_state("CG").is_terminal
    assert normalize_state("SE").is_terminal
    assert normalize_state("OOM").is_terminal


def test_table_keys_are_canonical_spellings() -> None:
    assert all(key == key.strip().upper() for key in SLURM_STATES)
    assert JobState.UNKNOWN not in SLURM_STATES.values()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0:0", (0, 0)),
        ("3:0", (3, 0)),
        ("0:9", (0, 9)),
        ("0:15", (0, 15)),
        ("255:0", (255, 0)),
        (" 1:0\n", (1, 0)),
        ("2", (2, None)),
        ("", (None, None)),
        ("N/A", (None, None)),
    ],
)
def test_parse_exit_code(text: str, expected: tuple[int | None, int | None]) -> None:
    assert parse_exit_code(text) == expected


@pytest.mark.parametrize("text", ["x:y", "3:", ":9", "-1:0", "3:0:1"])
def test_parse_exit_code_rejects_junk_naming_it(text: str) -> None:
    with pytest.raises(SlurmParseError, match="unexpected exit code"):
        parse_exit_code(text)
