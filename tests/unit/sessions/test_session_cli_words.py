"""What ``svc session start`` tells a person on stderr: the time limit in H:MM:SS, a hint when ``-t`` was most
likely meant as minutes (sbatch reads ``0:10`` as ten seconds), and the command that opens the session; an empty
``svc session list`` says how to start one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from svc_host.cli.session import _started_words


@pytest.mark.parametrize(
    ("limit", "opening", "words"),
    [
        (
            10,
            True,
            "session 12 on 'dev' started, time limit 0:00:10 (as sbatch reads -t: for 10 minutes write -t 10 or "
            "-t 0:10:00)",
        ),
        (
            7200,
            False,
            "session 12 on 'dev' started, time limit 2:00:00; `svc session open 12 --transport dev` opens it once "
            "ready",
        ),
        (
            None,
            True,
            "session 12 on 'dev' started, no time limit of its own (the partition's)",
        ),
    ],
)
def test_a_start_says_its_time_limit_and_what_comes_next(limit: int | None, opening: bool, words: str) -> None:
    view = {"job_id": "12", "state": "queued", "time_limit_seconds": limit}
    assert _started_words(view, "dev", opening=opening) == words


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], "no sessions yet: `svc session start jupyter -G 1 -t 1:00:00 --open` starts one\n"),
        (
            ["-t", "dev"],
            "no sessions on 'dev' yet: `svc session start jupyter -G 1 -t 1:00:00 --transport dev --open` starts one\n",
        ),
    ],
)
def test_an_empty_list_says_how_to_start_a_session(args: list[str], words: str) -> None:
    command = [sys.executable, "-m", "svc_host", "session", "list", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (0, words), done.stderr
