"""Local processes started so that giving up on one never hangs the event loop (``svc_host.transports.processes``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

GIVE_UP_AT_EVERY_TURN = """
import asyncio, sys
from svc_host.transports.processes import ProcessStarts

async def main(turns, marker):
    starts = ProcessStarts()
    argv = ["sh", "-c", f"sleep 1; touch {marker}"]
    call = asyncio.create_task(starts.start(argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))
    for _ in range(turns):
        await asyncio.sleep(0)
    call.cancel()
    try:
        proc = await call
    except asyncio.CancelledError:
        pass
    else:  # it had started before the cancel landed: the caller has it
        proc.kill()
        await proc.wait()
    await starts.close()

for turns in range(16):
    asyncio.run(main(turns, f"{sys.argv[1]}/survived-{turns}"))
"""


def test_a_start_given_up_at_any_point_is_killed_and_lets_the_event_loop_end(tmp_path: Path) -> None:
    """A sync backend's rsync given up after 0 to 15 turns of the loop (a Ctrl-C, a server stopping), then its
    owner closed: every event loop ends (without the close, the loop's shutdown cancels the start half-way and
    hangs), and no process goes on to do its work."""
    markers = tmp_path / "markers"
    markers.mkdir()
    argv = [sys.executable, "-c", GIVE_UP_AT_EVERY_TURN, str(markers)]
    ended = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert (ended.returncode, ended.stderr) == (0, "")
    time.sleep(1.5)
    assert sorted(path.name for path in markers.iterdir()) == []
