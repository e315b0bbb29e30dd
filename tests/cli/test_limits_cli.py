"""``svc limits`` as a user runs it on the dev cluster: a table, JSON, and one line for a bad profile."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.cluster
def test_limits_as_a_table_and_as_json(slurm_cluster: None) -> None:
    table = svc("limits")
    assert table.returncode == 0, table.stderr
    assert "root on svcdev: account root, default QOS normal" in " ".join(table.stdout.split())
    assert "MaxJobCount" in table.stdout
    shown = json.loads(svc("limits", "--json", "-t", "local").stdout)
    assert (shown["user"], shown["max_job_count"]) == ("root", 10000)


def test_an_unknown_profile_is_one_line_and_exit_1() -> None:
    result = svc("limits", "-t", "nope")
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: no transport or SSH profile named 'nope'; choose one of: local")
