"""Tidying after an ended session, with the real command on this machine's files: the secret and the guard's
files go at once, the logs stay, and ended sessions' directories older than the keep time go, nothing else."""

from __future__ import annotations

import os
import time
from pathlib import Path

from svc_host.sessions import cleanup
from svc_plugin_local.transport import LocalTransport

OLD = time.time() - 8 * 24 * 3600


def a_session(root: Path, name: str, *, live: bool = False, old: bool = False) -> Path:
    where = root / name
    where.mkdir(parents=True)
    for spent in cleanup.SPENT_FILES:
        if spent != "secret" or live:
            (where / spent).write_text("x")
    (where / "job.out").write_text("served\n")
    (where / "job.err").write_text("Traceback ...\n")
    if old:
        os.utime(where, (OLD, OLD))
    return where


async def test_an_ended_session_keeps_its_logs_and_loses_its_secret_at_once(tmp_path: Path) -> None:
    ended = a_session(tmp_path / "sessions", "a" * 32, live=True)
    assert await cleanup.tidy(LocalTransport(), str(ended))
    assert sorted(p.name for p in ended.iterdir()) == ["job.err", "job.out"]


async def test_only_old_ended_sessions_directories_go_and_no_link_is_followed(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "secret").write_text("keep me")
    old_ended = a_session(root, "b" * 32, old=True)
    (old_ended / "link").symlink_to(outside)
    os.utime(old_ended, (OLD, OLD))
    old_live = a_session(root, "c" * 32, live=True, old=True)
    recent_ended = a_session(root, "d" * 32)
    not_a_session = a_session(root, "my-notes", old=True)
    linked = root / ("e" * 32)
    linked.symlink_to(outside)
    os.utime(linked, (OLD, OLD), follow_symlinks=False)
    ending = a_session(root, "f" * 32, live=True)

    assert await cleanup.tidy(LocalTransport(), str(ending))
    assert not old_ended.exists()
    assert sorted(p.name for p in root.iterdir()) == sorted(
        [old_live.name, recent_ended.name, not_a_session.name, linked.name, ending.name]
    )
    assert (old_live / "secret").exists()
    assert (outside / "secret").read_text() == "keep me"  # neither through the link inside nor the linked dir


async def test_a_session_directory_that_is_a_link_is_not_emptied(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret").write_text("not svc's")
    linked = tmp_path / "sessions" / ("a" * 32)
    linked.parent.mkdir()
    linked.symlink_to(outside)
    assert await cleanup.tidy(LocalTransport(), str(linked))
    assert (outside / "secret").read_text() == "not svc's"
