"""Starting an agent in the background (``svc agent start``, and an SSH command that found none unless
``SVC_AGENT`` says otherwise) and asking a running one how it is."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from svc_host.agent import client
from svc_host.agent.place import Place

DEFAULT_IDLE_MINUTES = 30.0


def spawn(place: Place, *, idle_minutes: float, connect: list[str]) -> subprocess.Popen[bytes]:
    """Start ``svc agent run`` detached (its own session, no terminal, this environment); it logs to
    ``place.log_file``. Returns without waiting for it to listen."""
    argv = [sys.executable, "-m", "svc_host", "agent", "run", "--idle-minutes", str(idle_minutes)]
    for name in connect:
        argv += ["--connect", name]
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        cwd="/",
    )


def ping(place: Place) -> dict[str, Any] | None:
    """What the running agent says about itself, or ``None`` when none answers."""
    try:
        answer = client.call(place, "ping", {})
    except client.AgentUnavailable:
        return None
    return answer if isinstance(answer, dict) else None


def wait_listening(place: Place, child: subprocess.Popen[bytes], *, timeout: float = 30.0) -> dict[str, Any] | None:
    """The agent's ``ping`` once it answers; ``None`` when ``child`` exited first or ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = ping(place)
        if answer is not None:
            return answer
        if child.poll() is not None:
            return ping(place)  # it may have found another agent of this setup running
        time.sleep(0.05)
    return None


def wait_stopped(place: Place, *, timeout: float = 15.0) -> bool:
    """True once no process holds the agent's lock (it closed its connections and the store)."""
    import fcntl

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            fd = os.open(place.lock, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            time.sleep(0.05)
        finally:
            os.close(fd)
    return False
