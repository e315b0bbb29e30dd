"""Interactive sessions end to end, as a user meets them: a real ``svc serve`` (its API, its session watch and its
sessions' origin on a second port) starts sessions on the real dev clusters, through the ``local`` transport
(Slurm 22.05 on this machine) and over SSH (the dev profile: 22.05, and lab24's 24.11 with SVC_TEST_SLURM=24.11).
A browser's requests go through the sessions' origin with the one-time link the API mints; nothing is faked.

Covered: a command's app serves a file and stops; an app that exits ends ``app_exited`` with its stderr; an app
that never answers ends ``start_timeout`` with its job cancelled; a stop while starting, after which the session's
secret is removed from the cluster (its logs kept) with ended sessions' directories older than a week; a ready
session and the browser's way into it outlive a restart of ``svc serve``; JupyterLab runs a cell
over its kernel's WebSocket; TensorBoard shows a scalar a job wrote; ``svc session start --open`` without
``svc serve``; the MCP tools and the CLI refuse bad input in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Message,
    Ping,
    RejectConnection,
    TextMessage,
)
from wsproto.events import Request as WsRequest

from svc_host.domain.profiles import SSHProfile
from svc_host.testing.serve import ServeProcess, free_port, isolated_env, start_serve
from svc_host.testing.waiting import DEADLINE, eventually, eventually_blocking
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster

TOKEN = "sessions-e2e-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
READY_WAIT = 240.0
"""Seconds for a session to be ready: a job start, then the app's own start (JupyterLab: tens of seconds on a
2-core machine under load), then the watch's next tick."""
CLUSTERS = [
    pytest.param("local", marks=pytest.mark.local_slurm, id="local"),
    pytest.param("dev", id="ssh"),
]


@dataclass
class Served:
    """A running ``svc serve`` whose sessions run on ``cluster``; ``env`` is its environment (its home, store)."""

    server: ServeProcess
    cluster: str
    sessions_port: int
    env: dict[str, str]
    apps: str

    @property
    def base(self) -> str:
        return self.server.base

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers=AUTH, timeout=120)


def add_profile(env: dict[str, str], profile: SSHProfile) -> None:
    """``svc profile add dev ...`` as a user runs it, in ``env``'s home."""
    command = [
        sys.executable, "-m", "svc_host", "profile", "add", "dev", "--hostname", profile.hostname,
        "--username", profile.username, "--key", str(profile.key_filename), "--port", str(profile.port),
        "--known-hosts", str(profile.known_hosts),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def cluster_env(root: Path, cluster: str, request: pytest.FixtureRequest) -> tuple[dict[str, str], str]:
    """An isolated home for svc under ``root`` (with the dev profile when ``cluster`` is ``dev``), and where the
    dev apps are on that cluster."""
    env = isolated_env(root, token=TOKEN)
    env["SVC_AGENT"] = "off"
    if cluster == "local":
        request.getfixturevalue("slurm_cluster")
        return env, os.environ.get("SVC_DEV_APPS", "/opt/svc-apps")
    dev_env: dict[str, str] = request.getfixturevalue("dev_env")
    add_profile(env, request.getfixturevalue("dev_profile"))
    return env, dev_env.get("SVC_DEV_APPS", "/opt/svc-apps")


@pytest.fixture(scope="module", params=CLUSTERS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    cluster: str = request.param
    root = tmp_path_factory.mktemp(f"serve-{cluster}")
    env, apps = cluster_env(root, cluster, request)
    sessions_port = free_port()
    server = start_serve(  # in a directory of its own: a local job's logs/ are written there
        "--sessions-port", str(sessions_port), env=env, base_env=env, cwd=root, log_level="warning"
    )
    found = Served(server, cluster, sessions_port, env, apps)
    try:
        yield found
    finally:
        with found.api() as api:  # nothing left running on the cluster
            for view in api.get("/api/sessions", params={"transport": cluster}).json():
                if view["state"] != "ended":
                    api.delete(f"/api/sessions/{view['job_id']}", params={"transport": cluster})
        err = server.stop()
        assert "Traceback" not in err, err
        assert f"Interactive sessions: their own origin on 127.0.0.1:{sessions_port}" in err  # the start-up line


def start(served: Served, kind: str, fields: dict[str, Any], **extra: Any) -> dict[str, Any]:
    with served.api() as api:
        answer = api.post(
            "/api/sessions",
            json={"kind": kind, "fields": fields, "transport": served.cluster, "time_limit": "10", **extra},
        )
    assert answer.status_code == 201, answer.text
    view: dict[str, Any] = answer.json()
    assert view["state"] == "queued"
    return view


def session(served: Served, job_id: str) -> dict[str, Any]:
    with served.api() as api:
        answer = api.get(f"/api/sessions/{job_id}", params={"transport": served.cluster})
    assert answer.status_code == 200, answer.text
    view: dict[str, Any] = answer.json()
    return view


def wait_session(served: Served, job_id: str, state: str, timeout: float = DEADLINE) -> dict[str, Any]:
    """The session once in ``state``, and every state it was seen in on the way (``seen``)."""
    seen: list[str] = []

    def look() -> dict[str, Any]:
        view = session(served, job_id)
        if not seen or seen[-1] != view["state"]:
            seen.append(view["state"])
        return view

    view = eventually_blocking(look, until=lambda v: v["state"] in (state, "ended"), timeout=timeout, what=state)
    assert view["state"] == state, view
    return {**view, "seen": seen}


def stop(served: Served, job_id: str) -> None:
    with served.api() as api:
        answer = api.delete(f"/api/sessions/{job_id}", params={"transport": served.cluster})
    assert answer.status_code == 204, answer.text


def job_state(served: Served, job_id: str) -> str:
    with served.api() as api:
        answer = api.get(f"/api/jobs/{job_id}", params={"transport": served.cluster})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["status"])


def link(served: Served, job_id: str) -> httpx.Response:
    with served.api() as api:
        return api.post(f"/api/sessions/{job_id}/link", params={"transport": served.cluster})


def entered(served: Served, job_id: str) -> tuple[httpx.Client, str]:
    """A browser that followed a fresh link into the session (its cookie set), and the session's base URL."""
    answer = link(served, job_id)
    assert answer.status_code == 200, answer.text
    url = answer.json()["url"]
    base = f"http://127.0.0.1:{served.sessions_port}/s/{served.cluster}/{job_id}/"
    assert url.startswith(base), url
    browser = httpx.Client(timeout=120)
    landing = browser.get(url)
    assert landing.status_code == 303, landing.text
    assert "svc_code" not in landing.headers["location"]
    return browser, base


def serving_command(mark: str) -> str:
    """A command session's app: Python's http.server in a new directory of its own (the app starts in the home
    directory, which sessions running side by side share), serving a file with ``mark``."""
    return (
        f'cd "$(mktemp -d)" && echo {shlex.quote(mark)} > page.txt && '
        'exec python3 -m http.server "$SVC_SESSION_PORT" --bind 127.0.0.1'
    )


def test_a_command_session_serves_a_file_through_the_sessions_origin_and_stops(served: Served) -> None:
    mark = f"served-{uuid.uuid4().hex}"
    job_id = start(served, "command", {"command": serving_command(mark)})["job_id"]
    early = link(served, job_id)
    if session(served, job_id)["state"] != "ready":  # before ready, a link is refused in words
        assert early.status_code == 409, early.text
        assert "only a ready session opens" in early.json()["detail"]
    ready = wait_session(served, job_id, "ready", READY_WAIT)
    assert set(ready["seen"]) <= {"queued", "starting", "ready"}, ready["seen"]
    assert ready["node"]
    assert ready["started_at"] <= ready["ready_at"]

    browser, base = entered(served, job_id)
    with contextlib.closing(browser):
        page = browser.get(f"{base}page.txt")
        assert page.status_code == 200, page.text
        assert page.text == f"{mark}\n"
        # the app starts away from the session's own files: its secret is not among what the app serves
        assert browser.get(f"{base}secret").status_code == 404
        stranger = httpx.get(f"{base}page.txt", timeout=60)  # no cookie: not let in
        assert stranger.status_code == 401
        assert "svc session open" in stranger.text

    stop(served, job_id)
    ended = wait_session(served, job_id, "ended")
    assert ended["end_reason"] == "stopped"
    eventually_blocking(lambda: job_state(served, job_id) == "CANCELLED", what="the job cancelled")
    gone = link(served, job_id)
    assert gone.status_code == 409
    assert "ended (stopped)" in gone.json()["detail"]


def test_an_app_that_exits_ends_the_session_with_its_stderr(served: Served) -> None:
    job_id = start(served, "command", {"command": "sh -c 'echo boom >&2; exit 3'"})["job_id"]
    ended = wait_session(served, job_id, "ended", READY_WAIT)
    assert ended["end_reason"] == "app_exited", ended
    assert "exit code 3" in ended["end_detail"]
    assert "boom" in ended["end_detail"]


def test_an_app_that_never_answers_ends_at_its_start_timeout_and_its_job_is_cancelled(served: Served) -> None:
    job_id = start(served, "command", {"command": "echo loading >&2; exec sleep 600"}, start_timeout=15)["job_id"]
    wait_session(served, job_id, "starting", READY_WAIT)
    ended = wait_session(served, job_id, "ended", 15 + DEADLINE)
    assert ended["end_reason"] == "start_timeout", ended
    assert "loading" in (ended["end_detail"] or "")
    eventually_blocking(lambda: job_state(served, job_id) == "CANCELLED", what="the job cancelled")


def session_dir(served: Served, job_id: str) -> str:
    """Where the session keeps its files on the cluster, from svc's store (no face shows it)."""
    database = Path(served.env["XDG_STATE_HOME"]) / "svc" / "svc.db"
    with contextlib.closing(sqlite3.connect(database)) as db:
        found = db.execute(
            "select session_dir from interactive_session where cluster = ? and job_id = ?", (served.cluster, job_id)
        ).fetchone()
    return str(found[0])


def on_cluster(served: Served, request: pytest.FixtureRequest, script: str, *args: str) -> str:
    """``sh -c script`` with ``args`` on the session's cluster, through svc's own transport; its stdout."""
    transport: LocalTransport | SSHTransport = (
        LocalTransport() if served.cluster == "local" else SSHTransport("dev", request.getfixturevalue("dev_profile"))
    )

    async def run() -> str:
        try:
            result = await transport.run(["sh", "-c", script, "sh", *args], timeout=60)
        finally:
            await transport.close()
        assert result.exit_code == 0, result.stderr
        return str(result.stdout)

    return asyncio.run(run())


def test_a_session_stopped_while_starting_ends_stopped_and_its_directory_is_tidied(
    served: Served, request: pytest.FixtureRequest
) -> None:
    job_id = start(served, "command", {"command": "exec sleep 600"})["job_id"]
    wait_session(served, job_id, "starting", READY_WAIT)
    where = session_dir(served, job_id)
    root = where.rsplit("/", 1)[0]
    old_ended, old_live = uuid.uuid4().hex, uuid.uuid4().hex  # two sessions of 8 days ago, one of them still live
    on_cluster(
        served,
        request,
        'cd "$1" && mkdir "$2" "$3" && echo log > "$2/job.out" && echo s > "$3/secret" && '
        'touch -d "8 days ago" "$2" "$3"',
        root,
        old_ended,
        old_live,
    )
    stop(served, job_id)
    ended = wait_session(served, job_id, "ended")
    assert ended["end_reason"] == "stopped"
    eventually_blocking(lambda: job_state(served, job_id) == "CANCELLED", what="the job cancelled")

    def listing() -> list[str]:
        return on_cluster(served, request, 'cd "$1" && ls -A "$2"; ls -A . | grep -x -e "$3" -e "$4" || true',
                          root, where.rsplit("/", 1)[1], old_ended, old_live).split()  # fmt: skip

    left = eventually_blocking(listing, until=lambda names: "secret" not in names, what="the secret removed")
    assert not {"secret", "app.json", "guard.py", "endpoint.json"} & set(left), left
    assert any(name.endswith((".out", ".err")) for name in left), left  # the job's logs stay
    assert old_live in left  # a live session's directory stays, however old
    assert old_ended not in left  # an ended session's older than a week goes
    on_cluster(served, request, 'rm -rf -- "$1/$2"', root, old_live)
    with served.api() as api:
        again = api.delete(f"/api/sessions/{job_id}", params={"transport": served.cluster})
    assert again.status_code == 422
    assert "already ended" in again.json()["detail"]


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_a_ready_session_outlives_a_restart_of_svc_serve(
    cluster: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """``svc serve`` stopped and started again (same home, same sessions port) while a session is ready: the
    session is still ready, and the browser that entered before the restart is let in again with its cookie."""
    env, apps = cluster_env(tmp_path, cluster, request)
    sessions_port = free_port()

    def serve() -> ServeProcess:
        return start_serve("--sessions-port", str(sessions_port), env=env, base_env=env, cwd=tmp_path)

    first = Served(serve(), cluster, sessions_port, env, apps)
    mark = f"restart-{uuid.uuid4().hex}"
    job_id = start(first, "command", {"command": serving_command(mark)})["job_id"]
    try:
        wait_session(first, job_id, "ready", READY_WAIT)
        browser, base = entered(first, job_id)
        with contextlib.closing(browser):
            assert browser.get(f"{base}page.txt").text == f"{mark}\n"
            assert "Traceback" not in first.server.stop()
            with pytest.raises(httpx.TransportError):  # the origin is down with its server
                browser.get(f"{base}page.txt")
            second = Served(serve(), cluster, sessions_port, env, apps)
            try:
                # the store remembers the session, the state directory the cookie's key: no new link needed
                assert session(second, job_id)["state"] == "ready"
                again = eventually_blocking(
                    lambda: browser.get(f"{base}page.txt"), until=lambda answer: answer.status_code == 200,
                    what="the page through the restarted server's origin",
                )  # fmt: skip
                assert again.text == f"{mark}\n"
                stop(second, job_id)
                assert wait_session(second, job_id, "ended")["end_reason"] == "stopped"
            finally:
                assert "Traceback" not in second.server.stop()
    finally:
        if first.server.process.poll() is None:
            first.server.stop()


class WebSocket:
    """A small blocking WebSocket client (wsproto over a socket): what a browser's page does, cookie included."""

    def __init__(self, url: str, cookie: str, origin: str | None = None) -> None:
        parts = urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=120)
        self.ws = WSConnection(ConnectionType.CLIENT)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        host = f"{parts.hostname}:{parts.port}"
        extra = [(b"cookie", cookie.encode())] + ([(b"origin", origin.encode())] if origin else [])
        self.sock.sendall(self.ws.send(WsRequest(host=host, target=target, extra_headers=extra)))
        for event in self._events():
            if isinstance(event, AcceptConnection):
                return
            if isinstance(event, RejectConnection):
                raise AssertionError(f"WebSocket refused: {event.status_code}")

    def _events(self) -> Iterator[Any]:
        while True:
            data = self.sock.recv(65536)
            self.ws.receive_data(data or None)
            yield from self.ws.events()
            if not data:
                return

    def send(self, text: str) -> None:
        self.sock.sendall(self.ws.send(Message(data=text)))

    def messages(self) -> Iterator[str]:
        buffered = ""
        for event in self._events():
            if isinstance(event, TextMessage):
                buffered += event.data
                if event.message_finished:
                    yield buffered
                    buffered = ""
            elif isinstance(event, Ping):
                self.sock.sendall(self.ws.send(event.response()))
            elif isinstance(event, CloseConnection):
                return

    def close(self) -> None:
        self.sock.close()


def execute_request(code: str) -> tuple[str, str]:
    msg_id = uuid.uuid4().hex
    message = {
        "header": {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "username": "svc-test",
            "session": uuid.uuid4().hex,
            "version": "5.3",
            "date": datetime.now(UTC).isoformat(),
        },
        "parent_header": {},
        "metadata": {},
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False},
        "channel": "shell",
        "buffers": [],
    }
    return msg_id, json.dumps(message)


def test_jupyterlab_runs_a_cell_over_its_kernels_websocket(served: Served) -> None:
    job_id = start(served, "jupyter", {"venv": served.apps})["job_id"]
    wait_session(served, job_id, "ready", READY_WAIT)
    browser, base = entered(served, job_id)
    with contextlib.closing(browser):
        assert urlsplit(str(browser.get(link(served, job_id).json()["url"]).headers["location"])).path.endswith("/lab")
        lab = browser.get(f"{base}lab")
        assert lab.status_code == 200, lab.text[:500]
        kernel = browser.post(f"{base}api/kernels", json={"name": "python3"})
        assert kernel.status_code == 201, kernel.text
        cookie = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
    ws_base = base.replace("http://", "ws://")
    channels = f"{ws_base}api/kernels/{kernel.json()['id']}/channels"
    with pytest.raises(AssertionError, match="WebSocket refused: 403"):  # a page on another port of this host
        WebSocket(channels, cookie, origin="http://127.0.0.1:9")
    socket_ = WebSocket(channels, cookie, origin=f"http://127.0.0.1:{served.sessions_port}")  # the lab's own page
    try:
        msg_id, text = execute_request("print(6*7)")
        socket_.send(text)
        for raw in socket_.messages():
            reply = json.loads(raw)
            if reply.get("parent_header", {}).get("msg_id") == msg_id and reply["msg_type"] == "stream":
                assert reply["content"]["text"] == "42\n"
                break
        else:
            raise AssertionError("the kernel's channel closed before the cell's output")
    finally:
        socket_.close()
    stop(served, job_id)
    assert wait_session(served, job_id, "ended")["end_reason"] == "stopped"


SCALAR_WRITER = """
import sys, time
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter
writer = EventFileWriter(sys.argv[1])
for step in range(3):
    value = summary_pb2.Summary.Value(tag="svc_e2e_loss", simple_value=1.0 / (step + 1))
    writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])))
writer.close()
"""


def test_tensorboard_shows_a_scalar_a_job_wrote(served: Served) -> None:
    logdir = f"/tmp/svc-e2e-tb-{uuid.uuid4().hex}/run1"
    python = f"{served.apps}/bin/python"
    script = f"#!/bin/bash\n{shlex.quote(python)} -c {shlex.quote(SCALAR_WRITER)} {shlex.quote(logdir)}\n"
    with served.api() as api:
        job = api.post("/api/jobs", json={"script_content": script}, params={"transport": served.cluster})
    assert job.status_code == 201, job.text
    writer = job.json()["job_id"]
    eventually_blocking(
        lambda: job_state(served, writer), until=lambda s: s not in ("PENDING", "RUNNING"), timeout=READY_WAIT
    )
    assert job_state(served, writer) == "COMPLETED"

    job_id = start(served, "tensorboard", {"logdir": logdir.rsplit("/", 1)[0], "venv": served.apps})["job_id"]
    wait_session(served, job_id, "ready", READY_WAIT)
    browser, base = entered(served, job_id)
    with contextlib.closing(browser):

        def tags() -> dict[str, Any] | None:
            answer = browser.get(f"{base}data/plugin/scalars/tags")
            return answer.json() if answer.status_code == 200 and answer.json() else None

        found = eventually_blocking(tags, what="TensorBoard's scalar tags")
        assert "svc_e2e_loss" in found["run1"]
    stop(served, job_id)


def opened(command: list[str], env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """Run ``svc session ...`` that opens a session (as a user runs it, no browser); yields the link it printed and
    the session's base URL, then stops it with Ctrl-C and checks it ended quietly."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = eventually_blocking(
            process.stdout.readline,
            until=lambda line: line or process.poll() is not None,  # '' is the end of its output
            timeout=READY_WAIT,
            what="the printed link",
        ).strip()
        match = re.match(r"^(http://127\.0\.0\.1:\d+/s/[^/]+/\d+/)\?svc_code=\S+$", line)
        assert match, (line, "" if process.poll() is None else process.communicate()[1])
        yield line, match.group(1)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=DEADLINE)
        assert "Traceback" not in err, err
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_svc_session_start_open_and_open_serve_it_without_svc_serve(
    request: pytest.FixtureRequest, served: Served, tmp_path: Path
) -> None:
    env, _ = cluster_env(tmp_path / "cli", served.cluster, request)  # a home of its own: no svc serve there
    mark = f"opened-{uuid.uuid4().hex}"
    svc = [sys.executable, "-m", "svc_host", "session"]
    start_open = [
        *svc, "start", "command", "--field", f"command={serving_command(mark)}", "--transport", served.cluster,
        "-t", "10", "--open", "--no-browser",
    ]  # fmt: skip
    if served.cluster == "dev":  # the agent serves remote transports only
        with agent_running(env) as agent_env:
            job_id, url = started_by_agent(served, agent_env, start_open, mark)
            opened_here(svc, env, served, job_id, mark)  # SVC_AGENT=off: served by the command itself
            stop_here(svc, env, served, job_id)
            eventually_blocking(lambda: agent_facts(agent_env)["sessions"] == [], what="the agent closing its port")
            with pytest.raises(httpx.ConnectError), httpx.Client(timeout=30) as late:
                late.get(url)
        return
    for url, base in opened(start_open, env):
        job_id = base.rstrip("/").rsplit("/", 1)[1]
        with httpx.Client(timeout=120, follow_redirects=True) as browser:
            page = browser.get(url)
            assert page.status_code == 200
            assert "page.txt" in page.text  # http.server's listing of the session's directory
            assert browser.get(f"{base}page.txt").text == f"{mark}\n"
    opened_here(svc, env, served, job_id, mark)
    stop_here(svc, env, served, job_id)


def stop_here(svc: list[str], env: dict[str, str], served: Served, job_id: str) -> None:
    stop_command = [*svc, "stop", job_id, "-t", served.cluster]
    stopped = subprocess.run(stop_command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert stopped.returncode == 0, stopped.stderr


def opened_here(svc: list[str], env: dict[str, str], served: Served, job_id: str, mark: str) -> None:
    """``svc session open`` serving the session in its own process until Ctrl-C; its link is good once."""
    for url, base in opened([*svc, "open", job_id, "-t", served.cluster, "--no-browser"], env):
        with httpx.Client(timeout=120) as browser:
            assert browser.get(url).status_code == 303
            assert browser.get(f"{base}page.txt").text == f"{mark}\n"
            assert browser.get(url).status_code == 401  # the link is good once


@contextlib.contextmanager
def agent_running(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """``svc agent start`` in ``env``'s home (connected to the dev profile); stopped afterwards."""
    agent_env = {**env, "SVC_AGENT": "manual"}
    agent = [sys.executable, "-m", "svc_host", "agent"]
    started = subprocess.run(
        [*agent, "start", "--connect", "dev"], env=agent_env, capture_output=True, text=True, timeout=120, check=False
    )
    assert started.returncode == 0, started.stderr
    try:
        yield agent_env
    finally:
        stopped = subprocess.run(
            [*agent, "stop"], env=agent_env, capture_output=True, text=True, timeout=120, check=False
        )
        assert stopped.returncode == 0, stopped.stderr


def agent_facts(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "svc_host", "agent", "status", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return dict(json.loads(done.stdout))


def started_by_agent(served: Served, env: dict[str, str], start_open: list[str], mark: str) -> tuple[str, str]:
    """``svc session start ... --open`` with an agent running: the agent starts the session (as it submits a job),
    waits until it is ready and serves it through its own connection, and the command returns at once with the
    link (the CLI has exited when the browser comes). The session's job id and the link."""
    done = subprocess.run(start_open, env=env, capture_output=True, text=True, timeout=READY_WAIT, check=False)
    assert done.returncode == 0, done.stderr
    assert "the svc agent serves the session until it ends" in done.stderr
    url = done.stdout.strip()
    match = re.fullmatch(rf"http://127\.0\.0\.1:(\d+)/s/{served.cluster}/(\d+)/\?svc_code=\S+", url)
    assert match, url
    port, job_id = int(match.group(1)), match.group(2)
    facts = agent_facts(env)
    assert facts["sessions"] == [{"cluster": served.cluster, "job_id": job_id, "port": port}]
    told = subprocess.run(
        [sys.executable, "-m", "svc_host", "agent", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert f"session {served.cluster}:{job_id} on http://127.0.0.1:{port}/" in told.stdout  # a person's view too
    calls = Path(facts["log"]).read_text()
    assert f"session_start on {served.cluster}: ok" in calls  # started through the agent's connection too
    with httpx.Client(timeout=120, follow_redirects=True) as browser:
        page = browser.get(url)
        assert page.status_code == 200
        assert "page.txt" in page.text  # http.server's listing of the session's directory
        assert browser.get(f"http://127.0.0.1:{port}/s/{served.cluster}/{job_id}/page.txt").text == f"{mark}\n"
    return job_id, url


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["start", "nope"], "unknown session kind 'nope'; choose one of: command, jupyter"),
        (["start", "tensorboard", "--field", "logdir="], "fields.logdir"),
        (["start", "command", "--field", "colour=red"], "fields.colour"),
        (["start", "command", "--field", "oops"], "--field expects KEY=VALUE"),
        (["open", "12x"], "job id"),
        (["stop", "999999999", "-t", "local"], "no session 999999999"),
    ],
)
def test_the_cli_refuses_bad_input_in_one_line(args: list[str], words: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "svc_host", "session", *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode != 0
    assert words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip() and not line.startswith("Usage")]) <= 3


@contextlib.asynccontextmanager
async def mcp_session(env: dict[str, str], cwd: Path) -> AsyncIterator[Callable[..., Awaitable[dict[str, Any]]]]:
    """``svc mcp`` over real stdio, as an agent starts it; ``await call(tool, **arguments)`` -> its result."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=env, cwd=str(cwd))
    async with Client(params) as client:

        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            assert result.structured_content is not None, result
            return dict(result.structured_content)

        yield call


async def test_the_mcp_tools_refuse_bad_input_and_start_and_stop_a_session(slurm_cluster: None, tmp_path: Path) -> None:
    env = {**isolated_env(tmp_path / "agent", token=TOKEN), "SVC_AGENT": "off"}
    async with mcp_session(env, tmp_path) as mcp:
        unknown = await mcp("start_session", kind="nope", transport="local")
        assert unknown["success"] is False
        assert unknown["error"].startswith("unknown session kind 'nope'; choose one of: command, jupyter, ")
        no_logdir = await mcp("start_session", kind="tensorboard", fields={}, transport="local")
        assert no_logdir["success"] is False
        assert "fields.logdir" in no_logdir["error"]
        bad_gpus = await mcp("start_session", kind="command", fields={"command": "true"}, gpus="lots")
        assert bad_gpus["success"] is False
        assert "gpus" in bad_gpus["error"]
        assert (await mcp("stop_session", job_id="12x"))["success"] is False
        missing = await mcp("stop_session", job_id="999999999", transport="local")
        assert missing == {"success": False, "error": "no session 999999999 on transport 'local'"}
        assert (await mcp("list_sessions", transport="local"))["sessions"] == []

        mark = f"agent-{uuid.uuid4().hex}"
        started = await mcp("start_session", kind="command", fields={"command": serving_command(mark)}, time_limit="10")
        assert started["success"] is True, started
        job_id = started["session"]["job_id"]
        assert started["session"]["open_command"] == f"svc session open {job_id} -t local"

        async def state() -> dict[str, Any] | None:
            listed = (await mcp("list_sessions", transport="local"))["sessions"]
            return next((view for view in listed if view["job_id"] == job_id), None)

        ready = await eventually(state, until=lambda view: view["state"] in ("ready", "ended"), timeout=READY_WAIT)
        assert ready["state"] == "ready", ready
        stopped = await mcp("stop_session", job_id=job_id, transport="local")
        assert stopped["success"] is True, stopped
        ended = await eventually(state, until=lambda view: view["state"] == "ended")
        assert ended["end_reason"] == "stopped"
        again = await mcp("stop_session", job_id=job_id, transport="local")
        assert again["success"] is False
        assert "already ended" in again["error"]
