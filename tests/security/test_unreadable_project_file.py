"""Issue 26, N17: an untrusted ``.svc.json`` that cannot be read as a config file never stops a command.

A cloned repository decides what its ``.svc.json`` is: a FIFO (a read would hang), a directory, a symlink to
``/dev/zero`` (endless) or a file over 1 MiB. Untrusted, its content is never used, so it must not be read past
what telling it apart takes: ``svc config show`` and ``svc submit`` go on with a one-line notice instead of failing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from svc_host.settings.files import MAX_CONFIG_BYTES


def fifo(path: Path) -> None:
    os.mkfifo(path)


def directory(path: Path) -> None:
    path.mkdir()


def endless(path: Path) -> None:
    path.symlink_to("/dev/zero")


def too_large(path: Path) -> None:
    path.write_text('{"log_dir": "x", "pad": "' + "x" * MAX_CONFIG_BYTES + '"}')


HOSTILE: dict[str, Callable[[Path], None]] = {
    "fifo": fifo,
    "directory": directory,
    "dev-zero": endless,
    "too-large": too_large,
}


def svc(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=project,
    )


@pytest.fixture(params=sorted(HOSTILE))
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "cloned"
    root.mkdir()
    HOSTILE[request.param](root / ".svc.json")
    return root


def test_config_show_goes_on(project: Path) -> None:
    shown = svc(project, "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["log_dir"] == "logs"
    assert "Traceback" not in shown.stderr
    assert f"ignoring project config {project / '.svc.json'}" in shown.stderr


@pytest.mark.cluster
def test_submit_goes_on(project: Path, slurm_cluster: None) -> None:
    """``--test-only``: Slurm is asked whether it would start the job, nothing is submitted."""
    checked = svc(project, "submit", "--test-only", "--partition", "debug", "--", "true")
    assert checked.returncode == 0, checked.stderr
    assert "Traceback" not in checked.stderr
    assert f"ignoring project config {project / '.svc.json'}" in checked.stderr
