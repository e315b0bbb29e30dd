"""A QOS of a test's own on the dev cluster: made afresh (a killed run may have left it behind), granted to root
(the ``local`` transport's user), and removed with its jobs afterwards. Never touches ``normal`` or another QOS."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator


def sacctmgr(*args: str, check: bool = True) -> None:
    """``sacctmgr -i ARGS``, tried three times: slurmdbd may be busy with another session's change."""
    for attempt in range(3):
        done = subprocess.run(["sacctmgr", "-i", *args], capture_output=True, text=True, timeout=60, check=False)
        if done.returncode == 0 or not check:
            return
        if attempt < 2:
            time.sleep(1)
    raise AssertionError(f"sacctmgr {' '.join(args)} failed: {done.stdout}{done.stderr}")


def remove_qos(name: str) -> None:
    subprocess.run(["scancel", f"--qos={name}"], capture_output=True, timeout=60, check=False)
    sacctmgr("modify", "user", "root", "set", f"qos-={name}", check=False)
    sacctmgr("delete", "qos", name, check=False)


@contextlib.contextmanager
def own_qos(name: str, *limits: str) -> Iterator[str]:
    """``with own_qos("svc_x", "MaxSubmitJobsPerUser=3"):`` the QOS exists and root may use it."""
    remove_qos(name)
    try:
        sacctmgr("add", "qos", name, *limits)
        sacctmgr("modify", "user", "root", "set", f"qos+={name}")
        yield name
    finally:
        remove_qos(name)
