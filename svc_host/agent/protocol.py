"""What the CLI and the agent say on the socket: one JSON object per line, one request per connection.

    CLI   -> {"svc": VERSION, "fingerprint": HEX, "call": NAME, "args": {...}, "cwd": "/abs/dir"}
    agent -> {"ready": true}  |  {"declined": WHY}  |  {"error": {...}}
    CLI   -> {"go": true}
    agent -> {"result": ...}  |  {"error": {"kind": KIND, "message": TEXT, "exit_code": N}}

The agent does nothing before ``go``. A CLI that got no ``ready`` in time closes the connection without
``go`` and runs the command itself, so a slow or stuck agent can never submit a job the CLI submits again.
``declined`` means "run it yourself" (another setup, a transport the agent does not serve); an ``error``
is the command's own answer, printed as the command would print it.

Error kinds: ``usage`` (a click usage error, exit 2), ``click`` (a click error with ``exit_code``), ``svc``
(an expected failure, ``error: ...`` and exit 1), ``request`` (the request itself was bad) and ``internal``
(a bug in the agent, logged there). Pure and standard library only: the CLI imports it on every SSH command.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_REQUEST_BYTES = 8 * 1024 * 1024
"""A request carries at most a batch script; anything longer is refused."""

JOB_CALLS = ("queue", "status", "submit", "log_step")
"""The calls behind ``svc jobs``, ``svc status``, ``svc submit`` and ``svc logs``."""
SESSION_CALLS = ("session_start", "session_open")
"""``svc session start`` (a call like ``submit``), and ``svc session open``: the agent serves the session on a port
of its own (``agent.session_ports``)."""
CONTROL_CALLS = ("ping", "stop")
SIDE_EFFECTS = {"submit": ("svc submit", "svc jobs"), "session_start": ("svc session start", "svc session list")}
"""Calls whose outcome is unknown when the agent is lost after ``go``, never run again by the CLI: the command
and where the user looks before trying again."""


class BadRequest(Exception):
    """A request the agent will not run; the message says what is wrong with it."""


def _text(value: object) -> bool:
    return isinstance(value, str)


def _optional_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _flag(value: object) -> bool:
    return isinstance(value, bool)


def _texts(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _optional_texts(value: object) -> bool:
    return value is None or _texts(value)


def _text_map(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


def _scalar_map(value: object) -> bool:
    return isinstance(value, dict) and all(
        item is None or (isinstance(item, str | int) and not isinstance(item, bool)) for item in value.values()
    )


def _stream(value: object) -> bool:
    return value in ("stdout", "stderr")


ARGUMENTS: dict[str, dict[str, tuple[Callable[[object], bool], str]]] = {
    "queue": {"transport": (_text, "a string"), "user": (_optional_text, "a string or null")},
    "status": {"transport": (_text, "a string"), "job_ids": (_texts, "a list of strings")},
    "submit": {
        "transport": (_text, "a string"),
        "fields": (_scalar_map, "an object of strings, integers or nulls"),
        "command": (_optional_texts, "a list of strings or null"),
        "script": (_optional_text, "a string or null"),
        "env": (_text_map, "an object of strings"),
        "mount": (_optional_text, "a string or null"),
        "test_only": (_flag, "true or false"),
    },
    "log_step": {
        "transport": (_text, "a string"),
        "job_id": (_text, "a string"),
        "which": (_stream, "'stdout' or 'stderr'"),
        "offset": (_count, "a non-negative integer"),
        "follow": (_flag, "true or false"),
    },
    "session_start": {
        "transport": (_text, "a string"),
        "kind": (_text, "a string"),
        "fields": (_text_map, "an object of strings"),
        "gpus": (_optional_text, "a string or null"),
        "time_limit": (_optional_text, "a string or null"),
        "partition": (_optional_text, "a string or null"),
    },
    "session_open": {"transport": (_text, "a string"), "job_id": (_text, "a string"), "wait": (_flag, "true or false")},
    "ping": {},
    "stop": {},
}
"""Every call and its arguments: each one required, none other allowed."""


@dataclass(frozen=True)
class Request:
    version: str
    fingerprint: str
    call: str
    args: dict[str, Any]
    cwd: str


def request_line(request: Request) -> bytes:
    body = {
        "svc": request.version,
        "fingerprint": request.fingerprint,
        "call": request.call,
        "args": request.args,
        "cwd": request.cwd,
    }
    return message(body)


def message(body: Mapping[str, Any]) -> bytes:
    """One line on the socket (non-ASCII kept as is; lone surrogates of undecodable log bytes escaped)."""
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def parse_request(line: bytes) -> Request:
    """The request in ``line``, validated; ``BadRequest`` names the first thing wrong with it."""
    try:
        body = json.loads(line)
    except (UnicodeDecodeError, ValueError):
        raise BadRequest("a request is one JSON object on one line") from None
    if not isinstance(body, dict):
        raise BadRequest("a request is one JSON object on one line")
    for key in ("svc", "fingerprint", "call", "cwd"):
        if not isinstance(body.get(key), str):
            raise BadRequest(f"request field {key!r} must be a string")
    call, args = body["call"], body.get("args")
    if call not in ARGUMENTS:
        raise BadRequest(f"unknown call {call!r}; choose one of: {', '.join(ARGUMENTS)}")
    if not isinstance(args, dict):
        raise BadRequest(f"call {call!r}: 'args' must be an object")
    expected = ARGUMENTS[call]
    unknown = sorted(set(args) - set(expected))
    if unknown:
        raise BadRequest(f"call {call!r} takes no argument {unknown[0]!r}; it takes: {', '.join(expected) or 'none'}")
    for name, (valid, what) in expected.items():
        if name not in args:
            raise BadRequest(f"call {call!r} needs argument {name!r} ({what})")
        if not valid(args[name]):
            raise BadRequest(f"call {call!r}: argument {name!r} must be {what}")
    if not body["cwd"].startswith("/"):
        raise BadRequest("request field 'cwd' must be an absolute path")
    return Request(body["svc"], body["fingerprint"], call, args, body["cwd"])


def parse_reply(line: bytes) -> dict[str, Any]:
    """One reply of the agent; ``ValueError`` when it is not one JSON object with one known key."""
    body = json.loads(line)
    if not isinstance(body, dict) or len(body) != 1 or next(iter(body)) not in ("ready", "declined", "error", "result"):
        raise ValueError(f"not an svc agent reply: {line[:200]!r}")
    return body
