"""The local transport's timeout: an unknown outcome, and nothing the command started is left running."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from svc_host.errors import OutcomeUnknownError
from svc_host.testing.waiting import DEADLINE
from svc_plugin_local.transport import LocalTransport


async def test_a_timeout_kills_the_command_and_its_children_at_once(tmp_path: Path) -> None:
    marker = tmp_path / "survived"
    started = time.monotonic()
    with pytest.raises(OutcomeUnknownError, match=r"^sh timed out after 1 s$") as caught:
        await LocalTransport(timeout=1).run(["sh", "-c", f"(sleep 3; touch {marker}) & sleep 600"])
    assert caught.value.timed_out
    assert time.monotonic() - started < DEADLINE  # not held until the command would have ended (600 s)
    await asyncio.sleep(3.5)
    assert not marker.exists()  # the child was killed with its parent


async def test_a_caller_that_gives_up_while_the_command_starts_is_not_held_and_leaves_nothing(tmp_path: Path) -> None:
    """Cancelled at any point of the start (after 0 to 15 turns of the loop): the cancel returns at once and the
    command, once started, is killed with what it started."""
    markers = [tmp_path / f"survived-{turns}" for turns in range(16)]
    for turns, marker in enumerate(markers):
        call = asyncio.create_task(LocalTransport().run(["sh", "-c", f"(sleep 1; touch {marker}) & sleep 1"]))
        for _ in range(turns):
            await asyncio.sleep(0)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(call, timeout=5)
    await asyncio.sleep(1.5)
    assert [marker.name for marker in markers if marker.exists()] == []


GIVE_UP_THEN_EXIT = """
import asyncio, sys
from svc_host.testing.waiting import DEADLINE
from svc_plugin_local.transport import LocalTransport

async def main(turns, shared):
    transport = LocalTransport()
    argv = ["sh", "-c", "sleep 30 & sleep 30"]
    call = asyncio.create_task(transport.query(argv) if shared else transport.run(argv))
    for _ in range(turns):
        await asyncio.sleep(0)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    await transport.close()

for shared in (False, True):
    for turns in range(16):
        asyncio.run(main(turns, shared))
"""


def test_a_program_whose_caller_gave_up_mid_start_ends_once_its_transport_is_closed() -> None:
    """What a CLI command does when the monitor's query is still starting as the command ends: the event loop's
    own shutdown must not cancel that start (Python 3.11 then waits forever on the half-started process), also
    when the query is shared (single flight) and so goes on after its caller left."""
    argv = [sys.executable, "-c", GIVE_UP_THEN_EXIT]
    ended = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert (ended.returncode, ended.stderr) == (0, "")
