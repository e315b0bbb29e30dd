"""Asking the agent: one connection per call, short waits, and ``AgentUnavailable`` whenever the CLI should
run the command itself instead (no agent, a stale socket, a slow or confused agent, a call it declines).

The only failure that is not ``AgentUnavailable`` comes after ``go`` on a call with side effects: an agent
lost while it submitted may have submitted, so the CLI says so rather than submitting a second time.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Any, NoReturn

import click

from svc_host import __version__
from svc_host.agent import protocol
from svc_host.agent.place import Place
from svc_host.errors import ConfigError, SvcError

CONNECT_TIMEOUT = 0.5
READY_TIMEOUT = 2.0
"""How long an agent may take to say ``ready``: it does nothing else first, so only a stuck one is slower."""
RESULT_TIMEOUT = 150.0
"""Longer than any command of a transport may take (60 s, after a 15 s connect and its retries)."""


class AgentUnavailable(Exception):
    """No agent ran the call; the caller runs it itself. ``absent``: no agent is listening at all."""

    def __init__(self, reason: str, *, absent: bool = False) -> None:
        super().__init__(reason)
        self.absent = absent


def call(place: Place, name: str, args: dict[str, Any]) -> Any:
    """The result of call ``name`` run by the agent at ``place``; its errors are raised as the command
    would raise them itself (click usage and other errors, ``SvcError``)."""
    try:
        cwd = os.getcwd()
    except OSError as exc:
        raise AgentUnavailable(f"no working directory: {exc}") from None
    request = protocol.Request(__version__, place.fingerprint, name, args, cwd)
    with _connect(place) as sock, sock.makefile("rb") as replies:
        try:
            sock.sendall(protocol.request_line(request))
            sock.settimeout(READY_TIMEOUT)
            first = protocol.parse_reply(replies.readline(protocol.MAX_REQUEST_BYTES))
        except (OSError, ValueError) as exc:  # a timeout, a reset, EOF or garbage: nothing was run
            raise AgentUnavailable(f"the agent did not get ready: {exc or type(exc).__name__}") from None
        if "declined" in first:
            raise AgentUnavailable(f"the agent declined: {first['declined']}")
        if "error" in first:
            _raise(first["error"], name, place, started=False)
        if "ready" not in first:
            raise AgentUnavailable(f"the agent answered {next(iter(first))!r} before 'ready'")
        try:
            sock.sendall(protocol.message({"go": True}))
            sock.settimeout(RESULT_TIMEOUT)
            reply = protocol.parse_reply(replies.readline())
        except (OSError, ValueError) as exc:
            _lost(name, place, exc)
        if "error" in reply:
            _raise(reply["error"], name, place, started=True)
        if "result" not in reply:
            _lost(name, place, ValueError(f"unexpected reply {next(iter(reply))!r}"))
        return reply["result"]


@contextlib.contextmanager
def _connect(place: Place) -> Any:
    try:
        place.secure_dir(create=False)
    except ConfigError as exc:
        raise AgentUnavailable(str(exc), absent=True) from None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(str(place.socket))
        except FileNotFoundError:
            raise AgentUnavailable("no agent is listening", absent=True) from None
        except ConnectionRefusedError:
            _remove_stale(place)
            raise AgentUnavailable("a stale agent socket (removed)", absent=True) from None
        except OSError as exc:
            raise AgentUnavailable(f"cannot connect to the agent: {exc}") from None
        yield sock
    finally:
        sock.close()


def _remove_stale(place: Place) -> None:
    """Remove a socket nobody listens on, unless an agent holds the lock (it may be starting up right now)."""
    import fcntl

    try:
        fd = os.open(place.lock, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        Path(place.socket).unlink(missing_ok=True)
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return
    else:
        Path(place.socket).unlink(missing_ok=True)
        Path(place.lock).unlink(missing_ok=True)  # while holding it, as an agent does when it exits
    finally:
        os.close(fd)


class _AgentClickException(click.ClickException):
    """A click error the agent's command raised, with the exit code it had there."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        # click declares exit_code per class (a ClassVar from click 8.5); this one differs per instance
        vars(self)["exit_code"] = exit_code


def _raise(error: Any, name: str, place: Place, *, started: bool) -> NoReturn:
    """Raise the command's own error from the agent's answer; any other failure of a call that ``started``
    (got ``go``) and has side effects has an unknown outcome."""
    kind = error.get("kind") if isinstance(error, dict) else None
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    if kind == "usage":
        raise click.UsageError(message)
    if kind == "click":
        raise _AgentClickException(message, int(error.get("exit_code", 1)))
    if kind == "svc":
        raise SvcError(message)
    if started:
        _lost(name, place, ValueError(message or str(kind)))
    raise AgentUnavailable(f"the agent failed: {kind}: {message}")


def _lost(name: str, place: Place, cause: Exception) -> NoReturn:
    if name in protocol.SIDE_EFFECTS:
        command, look = protocol.SIDE_EFFECTS[name]
        raise SvcError(
            f"the svc agent failed during `{command}` ({cause or type(cause).__name__}), so whether it took "
            f"effect is unknown: look with `{look}` before you try again (agent log: {place.log_file})"
        )
    raise AgentUnavailable(f"the agent was lost: {cause or type(cause).__name__}")
