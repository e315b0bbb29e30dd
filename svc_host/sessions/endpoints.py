"""Where node guards listen: the ``endpoint.json`` of many sessions of one cluster, read in one command.

The guard writes ``endpoint.json`` (atomically) once it runs, so its appearance says the job runs and the guard
listens, whatever the monitor last saw. The watch reads it for every session still waiting on a cluster at each
of its quick ticks, so one command per cluster and tick, never one per session: a shell loop over the session
directories, each a positional parameter (``"$@"``), never part of the script text, printing each file's bytes as
one line (a missing one as an empty line) in the order asked, with the shell's builtins alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from svc_host.errors import TransportError
from svc_host.sessions.files import SessionFiles

ENDPOINT_FILE = "endpoint.json"
MAX_ENDPOINT_LINES = 64
"""The most lines read of one ``endpoint.json`` (the guard writes one)."""
READ_ALL = (
    'for d; do out= n=0 f="$d/endpoint.json"; '
    'if [ -r "$f" ]; then '
    f'while [ "$n" -lt {MAX_ENDPOINT_LINES} ] && {{ IFS= read -r line || [ -n "$line" ]; }}; '
    'do out="$out$line" n=$((n + 1)); done < "$f"; '
    'fi; printf "%s\\n" "$out"; done'
)
"""One line per directory given: its ``endpoint.json`` with its lines joined (JSON needs no newline), or nothing.
Shell builtins only: no process per session (``head``, ``tr``), which every quarter second added up."""


def endpoint_of(found: dict[str, Any] | None, job_id: str) -> tuple[str, int] | None:
    """``(host, port)`` from the guard's ``endpoint.json`` when it is whole and about this job."""
    if found is None or str(found.get("job_id", job_id)) != job_id:
        return None
    host, port = found.get("host"), found.get("port")
    if not isinstance(host, str) or not host or not isinstance(port, int) or not 0 < port < 65536:
        return None
    return host, port


def parse_lines(stdout: str, sessions: Sequence[tuple[str, str]]) -> dict[str, tuple[str, int]]:
    """The endpoints in ``READ_ALL``'s output for ``sessions`` ((job id, directory) in the order asked), by job
    id; a session whose line is empty, partial or about another job is left out."""
    found: dict[str, tuple[str, int]] = {}
    for (job_id, _), line in zip(sessions, stdout.split("\n"), strict=False):
        try:
            value = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        endpoint = endpoint_of(value if isinstance(value, dict) else None, job_id)
        if endpoint is not None:
            found[job_id] = endpoint
    return found


async def read_all(target: SessionFiles, sessions: Sequence[tuple[str, str]]) -> dict[str, tuple[str, int]]:
    """The endpoints known of ``sessions`` ((job id, directory)) of one cluster, by job id, in one command."""
    if not sessions:
        return {}
    argv = ["sh", "-c", READ_ALL, "sh", *(directory for _, directory in sessions)]
    result = await target.run(argv, timeout=30)
    if result.exit_code != 0:
        raise TransportError(
            f"could not read the sessions' endpoints on transport {target.name!r}",
            argv=argv[:3],
            exit_code=result.exit_code,
            stderr=result.stderr,
        )
    return parse_lines(result.stdout, sessions)
