"""``svc schedule`` as a user runs it: real processes, times in the local zone, one-line errors, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.cli.schedule import format_every, parse_every

FLOW = "name: nightly-train\njobs:\n  - {name: train, command: echo training}\n"


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", "schedule", *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture(autouse=True)
def workflow() -> None:
    """A workflow in the directory svc serve keeps them in (``$XDG_STATE_HOME/svc/workflows``)."""
    directory = Path(os.environ["XDG_STATE_HOME"]) / "svc" / "workflows"
    directory.mkdir(parents=True)
    (directory / "train.yaml").write_text(FLOW)


def test_add_list_show_disable_enable_remove() -> None:
    added = svc("add", "nightly", "-w", "train", "--cron", "0 3 * * *", "--tz", "Europe/Berlin", "--arg", "lr=0.1")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("schedule nightly: cron 0 3 * * * (Europe/Berlin); next: ")
    assert svc("add", "poll", "-w", "train", "--every", "15m", "--missed", "run_once").returncode == 0

    rows = json.loads(svc("list", "--json").stdout)
    assert [(r["name"], r["cron"], r["every"], r["args"], r["missed"]) for r in rows] == [
        ("nightly", "0 3 * * *", None, {"lr": "0.1"}, "skip"),
        ("poll", None, 900, {}, "run_once"),
    ]
    table = svc("list").stdout
    assert "every 15m" in table
    assert "nightly" in table

    shown = svc("show", "nightly", "--upcoming", "3")
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert lines[0] == "nightly: workflow train, cron 0 3 * * * (Europe/Berlin), enabled"
    assert len([line for line in lines if line.startswith("  next: ")]) == 3

    assert svc("disable", "nightly").stdout == "disabled schedule nightly\n"
    assert json.loads(svc("show", "nightly", "--json").stdout)["next_fire_at"] is None
    assert svc("enable", "nightly").returncode == 0
    assert json.loads(svc("show", "nightly", "--json").stdout)["next_fire_at"] is not None
    assert svc("remove", "poll").stdout == "removed schedule poll\n"
    assert [r["name"] for r in json.loads(svc("list", "--json").stdout)] == ["nightly"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("add", "x", "-w", "nope", "--every", "1h"), "error: workflow 'nope' not found"),
        (
            ("add", "x", "-w", "train", "--cron", "0 25 * * *"),
            "invalid cron '0 25 * * *': the hour (2nd field) must be 0-23",
        ),
        (("add", "x", "-w", "train"), "give exactly one of cron"),
        (("add", "x", "-w", "train", "--every", "soon"), "'soon' is not a duration such as 90s, 15m, 2h or 1d"),
        (("add", "x", "-w", "train", "--every", "1h", "--arg", "novalue"), "--arg expects NAME=VALUE"),
        (("show", "ghost"), "error: schedule 'ghost' not found"),
        (("remove", "ghost"), "error: schedule 'ghost' not found"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(args: tuple[str, ...], message: str) -> None:
    result = svc(*args)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert json.loads(svc("list", "--json").stdout) == []


def test_a_name_is_taken_once() -> None:
    assert svc("add", "x", "-w", "train", "--every", "1h").returncode == 0
    again = svc("add", "x", "-w", "train", "--every", "2h")
    assert (again.returncode, again.stderr) == (1, "error: schedule 'x' already exists\n")


@pytest.mark.parametrize(("seconds", "text"), [(900, "15m"), (86400, "1d"), (7200, "2h"), (90, "90s"), (60, "1m")])
def test_intervals_read_back_as_typed(seconds: int, text: str) -> None:
    assert format_every(seconds) == text
    assert parse_every(text) == seconds


def test_a_schedule_records_the_default_cluster_it_was_made_on() -> None:
    """A schedule naming no cluster fires on the one that was the default when it was made, not on today's."""
    assert svc("add", "poll", "-w", "train", "--every", "1h").returncode == 0
    assert json.loads(svc("show", "poll", "--json").stdout)["transport"] == "local"
