"""Sessions the agent serves on 127.0.0.1: ``svc session open`` (and ``start --open``) through the agent.

The agent's calls are request and answer, but a browser needs a port that stays. So the agent serves the session
itself: a port of its own on 127.0.0.1 per session, running the origin app ``svc serve`` runs on its sessions port
(``sessions/origin.py``), whose proxy dials the node through the transport the agent holds (over SSH, a
direct-tcpip channel on the agent's one connection to the login node). The CLI gets the one-time link and returns;
the port is served until the session ends (stopped, time limit, app exited), then closed.

One ``session_open`` call waits at most ``WAIT_SECONDS`` for the session to be ready and answers its state when it
is not yet, so the CLI asks again (and says what it waits for) rather than holding one call for a queue's wait.
While a session is waited for or served, the agent runs the session watch (which keeps the monitor quick on the
session's cluster while it starts): the only polling it does of its own, ended with the last served session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import uvicorn

from svc_host.errors import InvalidStateError, NotFoundError, SvcError
from svc_host.sessions import manage, reach
from svc_host.sessions.entry import KEY_FILE, load_or_create_key
from svc_host.sessions.origin import SessionsOrigin
from svc_host.sessions.watch import SessionWatch

if TYPE_CHECKING:
    from svc_host.host import Host
    from svc_host.store.tables import InteractiveSessionRecord

log = logging.getLogger("svc.agent")

WAIT_SECONDS = 20.0
"""The longest one call waits for its session to be ready (well within the CLI's wait for a result)."""
TICK = 0.25
"""Seconds between looks at a waited-for session's row (the watch moves it every quarter second while it starts)."""
ENDED_TICK = 1.0
"""Seconds between looks at a served session's row, to close its port once it ended."""
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost"})
"""The names a browser may give this machine's IPv4 loopback by (the ports listen on 127.0.0.1 only)."""


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: the agent's own (SIGTERM, SIGINT, SIGHUP) stop every port at once."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class _Served:
    port: int
    server: _Server
    task: asyncio.Task[None]


class SessionPorts:
    """The sessions this agent serves, each on a port of its own, all through one origin app (one set of entry
    codes, one proxy per session)."""

    def __init__(self, host: Host, *, wait_seconds: float = WAIT_SECONDS) -> None:
        self.host = host
        self.wait_seconds = wait_seconds
        self._origin: SessionsOrigin | None = None
        self._watch: SessionWatch | None = None
        self._waiting = 0
        self._served: dict[tuple[str, str], _Served] = {}
        self.last_busy = time.monotonic()

    @property
    def busy(self) -> bool:
        """Whether a session is waited for or served (the agent neither idles out nor stops its monitor then)."""
        return bool(self._waiting or self._served)

    def describe(self) -> list[dict[str, Any]]:
        """What ``svc agent status --json`` lists: each served session and its port."""
        return [
            {"cluster": cluster, "job_id": job_id, "port": served.port}
            for (cluster, job_id), served in sorted(self._served.items())
        ]

    async def open(self, cluster: str, job_id: str, *, wait: bool = True) -> dict[str, Any]:
        """``{"url": LINK, "port": N}`` once the session is ready and served here (a new one-time link each call);
        ``{"state": STATE}`` when it is not ready within ``wait_seconds`` (at once without ``wait``: the CLI's
        first call, so it says what the session waits for before it waits). An unknown session is ``NotFoundError``,
        an ended one an ``InvalidStateError`` saying why it ended."""
        row = await manage.detail(self.host, cluster, job_id)
        self._waiting += 1
        try:
            if row.state != "ended":
                await self._watching()
            if row.state not in ("ready", "ended"):
                row = await self._ready(cluster, job_id, self.wait_seconds if wait else 0.0)
            if row.state == "ended":
                raise InvalidStateError(manage.ended_words(row))
            if row.state != "ready":
                return {"state": row.state}
            served = self._served.get((cluster, job_id)) or self._serve(cluster, job_id)
        finally:
            self._waiting -= 1
            await self._rest()
        origin = self._origin_app()
        spec = manage.kinds(self.host).get(row.kind)
        url = reach.entry_url(
            reach.server_address("127.0.0.1", served.port),
            cluster,
            job_id,
            spec.open_path if spec is not None else "",
            origin.mint_code(cluster, job_id),
        )
        return {"url": url, "port": served.port}

    async def close(self) -> None:
        """Close every port (the agent stops), then the watch and the origin's connections to the nodes."""
        for served in list(self._served.values()):
            served.server.should_exit = True
        await asyncio.gather(*(served.task for served in list(self._served.values())), return_exceptions=True)
        if self._watch is not None:
            await self._watch.close()
            self._watch = None
        if self._origin is not None:
            await self._origin.close()

    async def _ready(self, cluster: str, job_id: str, seconds: float) -> InteractiveSessionRecord:
        """The session's row once ready or ended, or as it is when ``seconds`` passed."""
        deadline = time.monotonic() + seconds
        while True:
            row = await manage.detail(self.host, cluster, job_id)
            if row.state in ("ready", "ended") or time.monotonic() >= deadline:
                return row
            await asyncio.sleep(TICK)

    async def _watching(self) -> None:
        if self._watch is None:
            self._watch = SessionWatch(self.host, interval=ENDED_TICK)
        await self._watch.start()

    async def _rest(self) -> None:
        """Stop the watch and the monitor once nothing is waited for or served."""
        self.last_busy = time.monotonic()
        if self.busy:
            return
        if self._watch is not None:
            await self._watch.close()
            self._watch = None
        await self.host.monitor.stop()

    def _origin_app(self) -> SessionsOrigin:
        if self._origin is None:
            self._origin = SessionsOrigin(
                reach.resolver(self.host),
                key=load_or_create_key(self.host.paths.state_dir / KEY_FILE),
                host_allowed=self._host_allowed,
                on_traffic=reach.note,
            )
        return self._origin

    def _host_allowed(self, value: str | None) -> bool:
        """Whether a request's Host is the loopback and one of the ports served here, as a link names it (a page
        whose DNS name was rebound to 127.0.0.1 sends its own name, and is refused)."""
        name, _, port = (value or "").rpartition(":")
        served = {served.port for served in self._served.values()}
        return name.lower() in LOOPBACK_NAMES and port.isdigit() and int(port) in served

    def _serve(self, cluster: str, job_id: str) -> _Served:
        """Listen on a free 127.0.0.1 port (before the link is made: a quick browser waits in the backlog) and
        serve the session there until it ends. Registered before anything awaits, so two calls at once serve
        one port. The monitor is poked for the session's cluster: its loop then runs while the job is live, so
        the watch sees the job end (a time limit) and the port closes, even when the session was ready before
        this agent first looked."""
        origin = self._origin_app()
        self.host.monitor.poke(cluster)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind(("127.0.0.1", 0))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            raise SvcError(f"cannot listen on 127.0.0.1 for the session: {exc}") from None
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            origin,
            host="127.0.0.1",
            port=port,
            log_config=None,
            access_log=False,  # an entry's query holds its one-time code
            lifespan="off",  # the origin is shared by every port: closed with the agent
            ws="wsproto",
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=5,
        )
        server = _Server(config)
        key = (cluster, job_id)
        task = asyncio.create_task(self._serve_until_ended(key, server, sock), name=f"session {cluster}/{job_id}")
        served = _Served(port, server, task)
        self._served[key] = served
        log.info("serving session %s on %s at 127.0.0.1:%d", job_id, cluster, port)
        return served

    async def _serve_until_ended(self, key: tuple[str, str], server: _Server, sock: socket.socket) -> None:
        ended = asyncio.create_task(self._until_ended(key, server))
        try:
            await server.serve([sock])
        except Exception:
            log.exception("serving session %s on %s failed", key[1], key[0])
        finally:
            ended.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ended
            sock.close()
            if key in self._served and self._served[key].server is server:
                del self._served[key]
            log.info("closed the port of session %s on %s", key[1], key[0])
            await self._rest()

    async def _until_ended(self, key: tuple[str, str], server: _Server) -> None:
        cluster, job_id = key
        while True:
            await asyncio.sleep(ENDED_TICK)
            try:
                row = await manage.detail(self.host, cluster, job_id)
            except NotFoundError:
                row = None
            if row is None or row.state == "ended":
                server.should_exit = True
                return
