"""A session's start: from Slurm's start of its job to "ready" as svc saw it, next to the app's own start.

A real ``svc serve`` (its API, monitor and session watch, as a user runs it) starts ``--runs`` sessions of each kind
on one dev cluster, one at a time, and each is stopped once ready. For each session:

- **job start**: the job's ``StartTime`` as Slurm keeps it (``scontrol show job``; whole seconds);
- **guard up**: the modification time of the node guard's ``endpoint.json`` (the guard's Python started, bound
  its port and wrote where it listens; nanoseconds);
- **app answers**: the first 2xx/3xx of the kind's ready path, asked here directly of the node guard with the
  secret every 20 ms from the moment ``endpoint.json`` appears (the same path svc's probe takes, through this
  process's own transport);
- **ready**: the session's ``ready_at`` as svc recorded it.

Printed per kind, as medians over the runs: job start -> ready (the issue's figure; goal: the app's own start + under
1 s), job start -> app answers (the app's own start, the guard's included), and app answers -> ready (what svc adds).
Slurm's StartTime has whole seconds, so figures from it carry up to 1 s of truncation (the job started up to 1 s
after it); "app answers -> ready" is exact.

Run from the repository root: ``python bench/session_start.py --cluster local`` (this machine's Slurm 22.05),
``--cluster ssh`` (the same over the dev sshd) or ``--cluster ssh24`` (lab24, Slurm 24.11); needs
``scripts/devcluster up`` (and ``up24``) and the dev apps in /opt/svc-apps.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from svc_host.domain.profiles import SSHProfile
from svc_host.sessions import probe
from svc_host.testing.serve import free_port, isolated_env, start_serve
from svc_host.transports.base import Transport
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-session-start-token-0123456789"  # noqa: S105 - the bench server's own
AUTH = {"Authorization": f"Bearer {TOKEN}"}
APPS = "/opt/svc-apps"
KINDS: dict[str, tuple[dict[str, Any], str]] = {
    "command": ({"command": f'exec {APPS}/bin/python -m http.server "$SVC_SESSION_PORT" --bind 127.0.0.1'}, ""),
    "jupyter": ({"venv": APPS}, "api/status"),
}
"""Kind -> (its fields, its ready path)."""


def dev_profile(version: str) -> SSHProfile:
    status, env_command, prefix = (
        ("status", "env", "SVC_DEV_") if version == "22.05" else ("status24", "env24", "SVC_DEV24_")
    )
    script = ROOT / "scripts" / "devcluster"
    if subprocess.run([script, status], capture_output=True, check=False).returncode != 0:
        sys.exit(f"the {version} dev cluster is not up: scripts/devcluster up")
    out = subprocess.run([script, env_command], capture_output=True, text=True, check=True).stdout
    env = {key.removeprefix(prefix): value for key, _, value in (line.partition("=") for line in out.splitlines())}
    return SSHProfile(
        hostname=env["SSH_HOST"],
        port=int(env["SSH_PORT"]),
        username=env["SSH_USER"],
        key_filename=env["SSH_KEY"],
        known_hosts=env["SSH_KNOWN_HOSTS"],
    )


def add_profile(env: dict[str, str], profile: SSHProfile) -> None:
    command = [
        sys.executable, "-m", "svc_host", "profile", "add", "dev", "--hostname", profile.hostname,
        "--username", profile.username, "--key", str(profile.key_filename), "--port", str(profile.port),
        "--known-hosts", str(profile.known_hosts),
    ]  # fmt: skip
    subprocess.run(command, env=env, capture_output=True, check=True, timeout=120)


def session_dir(env: dict[str, str], cluster: str, job_id: str) -> str:
    """Where the session keeps its files on the cluster, from svc's store (the API does not show it)."""
    database = Path(env["XDG_STATE_HOME"]) / "svc" / "svc.db"
    with contextlib.closing(sqlite3.connect(database)) as db:
        row = db.execute(
            "select session_dir from interactive_session where cluster = ? and job_id = ?", (cluster, job_id)
        ).fetchone()
    return str(row[0])


async def slurm_start(transport: Transport, job_id: str) -> float:
    """The job's StartTime (this machine's and the clusters' clocks and zones are one)."""
    result = await transport.run(["scontrol", "show", "job", "-o", job_id])  # type: ignore[attr-defined]
    field = next(word for word in result.stdout.split() if word.startswith("StartTime="))
    return datetime.fromisoformat(field.removeprefix("StartTime=")).timestamp()


async def mtime(transport: Transport, path: str) -> float | None:
    result = await transport.run(["stat", "-c", "%.9Y", path])  # type: ignore[attr-defined]
    return float(result.stdout) if result.exit_code == 0 else None


async def settled(api: httpx.AsyncClient, cluster: str, job_id: str) -> dict[str, Any]:
    """The session once ready (or ended), as svc's API shows it."""
    while True:
        view: dict[str, Any] = (await api.get(f"/api/sessions/{job_id}", params={"transport": cluster})).json()
        if view["state"] in ("ready", "ended"):
            return view
        await asyncio.sleep(0.05)


async def one_session(
    api: httpx.AsyncClient, transport: Transport, env: dict[str, str], cluster: str, kind: str
) -> dict[str, float]:
    fields, ready_path = KINDS[kind]
    started = await api.post("/api/sessions", json={"kind": kind, "fields": fields, "transport": cluster})
    started.raise_for_status()
    job_id = started.json()["job_id"]
    where = session_dir(env, cluster, job_id)
    try:
        endpoint: dict[str, Any] | None = None
        while endpoint is None:
            found = await transport.read_bytes(f"{where}/endpoint.json", 0, 4096)  # type: ignore[attr-defined]
            endpoint = json.loads(found[0]) if found and found[0] else None
            if endpoint is None:
                await asyncio.sleep(0.02)
        secret_bytes = await transport.read_bytes(f"{where}/secret", 0, 4096)  # type: ignore[attr-defined]
        secret = secret_bytes[0].decode().strip()
        headers = {"Authorization": f"token {secret}"} if kind == "jupyter" else {}
        path = f"/s/{cluster}/{job_id}/{ready_path}"
        while True:
            answer = await probe.get(
                transport, endpoint["host"], endpoint["port"], path, secret=secret, extra_headers=headers
            )
            if answer is not None and answer.ok:
                app_answers = time.time()
                break
            await asyncio.sleep(0.02)
        view = await settled(api, cluster, job_id)
        assert view["state"] == "ready", view
        job_start = await slurm_start(transport, job_id)
        guard_up = await mtime(transport, f"{where}/endpoint.json")
        return {
            "job start -> guard up": (guard_up or 0) - job_start,
            "job start -> app answers": app_answers - job_start,
            "app answers -> ready": datetime.fromisoformat(view["ready_at"]).timestamp() - app_answers,
            "job start -> ready": datetime.fromisoformat(view["ready_at"]).timestamp() - job_start,
        }
    finally:
        await api.delete(f"/api/sessions/{job_id}", params={"transport": cluster})


async def main(cluster: str, runs: int, kinds: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="svc-bench-") as root:
        env = {**isolated_env(Path(root), token=TOKEN), "SVC_AGENT": "off"}
        profile = None if cluster == "local" else dev_profile("22.05" if cluster == "ssh" else "24.11")
        if profile is not None:
            add_profile(env, profile)
        name = "local" if profile is None else "dev"
        transport: Transport = LocalTransport() if profile is None else SSHTransport("dev", profile)
        os.environ["HOME"] = env["HOME"]  # the local transport's session dirs are under the server's home
        server = start_serve("--sessions-port", str(free_port()), env=env, base_env=env)
        try:
            async with httpx.AsyncClient(base_url=server.base, headers=AUTH, timeout=300) as api:
                for kind in kinds:
                    rows = [await one_session(api, transport, env, name, kind) for _ in range(runs)]
                    print(f"{cluster} {kind} ({runs} sessions; medians, min-max)")
                    for label in rows[0]:
                        values = [row[label] for row in rows]
                        print(
                            f"  {label:28} {statistics.median(values):6.2f} s   ({min(values):.2f}-{max(values):.2f})"
                        )
        finally:
            server.stop()
            with contextlib.suppress(Exception):
                await transport.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=["local", "ssh", "ssh24"], default="local")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kind", action="append", choices=sorted(KINDS), help="repeatable; default: every kind")
    options = parser.parse_args()
    asyncio.run(main(options.cluster, options.runs, options.kind or sorted(KINDS)))
