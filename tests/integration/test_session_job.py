"""A session's job for real on the dev cluster: ``launch.prepare``'s files and job, submitted with this machine's
sbatch (the ``local`` transport), run the node guard in a Slurm job; from this machine, the node's port answers
only requests that carry the session's secret, and scancel reaches the app through the guard."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.submission import Resources
from svc_host.rendering.sbatch import render_sbatch
from svc_host.sessions import launch
from svc_host.testing.waiting import eventually, wait_for_state
from svc_plugin_local.transport import LocalTransport
from svc_plugin_sessions.kinds import BUILT_IN

pytestmark = pytest.mark.cluster

PAGE = "served by the session's job"


def get(host: str, port: int, path: str, secret: str | None) -> bytes:
    header = f"X-Svc-Session-Secret: {secret}\r\n" if secret is not None else ""
    with socket.create_connection((host, port), timeout=60) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{header}\r\n".encode())
        conn.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    return received


def read_json(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


async def test_the_guard_in_a_slurm_job_lets_in_only_the_secret(slurm_cluster: None, tmp_path: Path) -> None:
    kind = {spec.name: spec for spec in BUILT_IN}["command"]
    work = tmp_path / "app-work"
    work.mkdir()
    line = (
        f"pwd > {work}/started-in && cd {work} && echo {PAGE!r} > page.txt && "
        "exec python3 -m http.server $SVC_SESSION_PORT --bind 127.0.0.1"
    )
    fields = kind.fields.model_validate({"command": line})
    session_dir = tmp_path / "sessions" / "s1"
    session_dir.mkdir(parents=True, mode=0o700)
    prepared = launch.prepare(
        kind, fields, resources=Resources(time_limit="5"), session_dir=str(session_dir), cluster="local"
    )
    for name, text in prepared.files.items():
        descriptor = os.open(session_dir / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(text)
    transport = LocalTransport()
    job_id = await transport.submit(render_sbatch(prepared.definition))
    try:
        endpoint = await eventually(lambda: read_json(session_dir / "endpoint.json"), what="endpoint.json")
        assert endpoint["job_id"] == job_id
        assert endpoint["host"] == "localhost"  # the node's name: SLURMD_NODENAME
        host, port = endpoint["host"], endpoint["port"]
        page = f"/s/local/{job_id}/page.txt"

        refused = await asyncio.to_thread(get, host, port, page, None)
        assert refused.startswith(b"HTTP/1.1 403 Forbidden")
        wrong = await asyncio.to_thread(get, host, port, page, prepared.secret[:-1])
        assert wrong.startswith(b"HTTP/1.1 403 Forbidden")

        async def served() -> bytes | None:
            got = await asyncio.to_thread(get, host, port, page, prepared.secret)
            return None if got.startswith(b"HTTP/1.1 502") else got

        answer = await eventually(served, what="the app's answer")
        assert answer.startswith(b"HTTP/1.0 200 OK")
        assert answer.endswith(f"{PAGE}\n".encode())
        # the app started in the job's home directory, not beside the session's secret
        assert (work / "started-in").read_text().strip() == os.path.expanduser("~")
    finally:
        await transport.cancel([job_id])
        try:
            await wait_for_state(transport, job_id, {JobState.CANCELLED})
        finally:
            await transport.close()
    exited = await eventually(lambda: read_json(session_dir / "exit.json"), what="exit.json")
    assert exited == {"code": 128 + 15}  # scancel's SIGTERM ended the app, and the guard wrote it down
