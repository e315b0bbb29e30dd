"""The agent: one ``Host`` (the store, one SSH connection per profile) serving this user's CLI on a Unix socket.

It runs only what a command asks (no monitor loop of its own: the cluster is shared; only a session it serves
for ``svc session open`` keeps the session watch running until it ends, ``session_ports``), only for remote
transports (a local command depends on the caller's environment and directory, so the CLI runs it itself),
and only for the setup it was started in (``place.fingerprint``). Profiles changed by ``svc profile`` count at
the next call, as in ``svc serve`` (a profile whose connection settings changed reconnects). Other
configuration (job defaults, the project's ``.svc.json``) is read for each submit, from the caller's directory.

Every connection's peer must be this user (``SO_PEERCRED``), on top of the socket's 0600 mode in a 0700
directory. The log (``agent.log`` in the state directory, 0600) names calls, transports, outcomes and
durations, never arguments: a job's command line or environment values may be secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import socket
import struct
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from svc_host import __version__
from svc_host.agent import protocol
from svc_host.agent.calls import CALLS
from svc_host.agent.place import Place
from svc_host.agent.session_ports import SessionPorts
from svc_host.errors import ConfigError, SvcError
from svc_host.host import Host

log = logging.getLogger("svc.agent")

WAIT_FOR_GO = 5.0
"""How long a request or its ``go`` may take to arrive; a connection that says nothing is dropped."""
WATCH_SECONDS = 30.0
"""How often the agent checks whether it idled long enough, or its socket was removed."""


class AlreadyRunning(SvcError):
    """Another agent of the same setup holds the lock."""


def take_lock(place: Place) -> int:
    """Hold the agent's lock (for the life of the process) and write our pid into it; ``AlreadyRunning`` when
    another agent holds it. An agent removes its lock file as it exits (see ``run``), so the file locked must
    still be the one at the path: one removed between our open and our lock is opened again."""
    while True:
        fd = os.open(place.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise AlreadyRunning(f"an svc agent is already running (pid {holder}) on {place.socket}") from None
        try:
            current = os.stat(place.lock).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def listen(place: Place) -> socket.socket:
    """A listening socket at ``place.socket``, mode 0600 from the start (with the lock held, any socket already
    there is a dead agent's)."""
    place.socket.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(place.socket))
    finally:
        os.umask(old)
    os.chmod(place.socket, 0o600)
    sock.listen(64)
    return sock


def peer_uid(writer: asyncio.StreamWriter) -> int:
    raw = writer.get_extra_info("socket").getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[1])


def error_reply(exc: BaseException) -> dict[str, Any]:
    """The ``error`` a CLI raises again as the command's own (see ``protocol``)."""
    if isinstance(exc, click.UsageError):
        return {"kind": "usage", "message": exc.message}
    if isinstance(exc, click.ClickException):
        return {"kind": "click", "message": exc.message, "exit_code": exc.exit_code}
    if isinstance(exc, SvcError):
        return {"kind": "svc", "message": str(exc)}
    if isinstance(exc, protocol.BadRequest):
        return {"kind": "request", "message": str(exc)}
    return {"kind": "internal", "message": f"{type(exc).__name__} (see the agent's log)"}


class Agent:
    """Serves the job calls of ``svc_host.agent.calls`` on ``host`` until stopped or idle for ``idle_seconds``
    (``None``: never)."""

    def __init__(self, place: Place, host: Host, *, idle_seconds: float | None) -> None:
        self.place = place
        self.host = host
        self.idle_seconds = idle_seconds
        self.started_at = time.time()
        self.requests = 0
        self.served: set[str] = set()
        self._active = 0
        self._last_active = time.monotonic()
        self._stopping = asyncio.Event()
        self._profiles_checked: object = ()
        self._profiles_error: str | None = None
        self.sessions = SessionPorts(host)

    def stop(self, why: str) -> None:
        if not self._stopping.is_set():
            log.info("stopping: %s", why)
            self._stopping.set()

    async def serve(self, sock: socket.socket, connect: list[str]) -> None:
        """Serve on ``sock`` (from ``listen``) until stopped; connects ``connect`` in the background first."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(signum, self.stop, signal.Signals(signum).name)
        inode = os.stat(self.place.socket).st_ino
        server = await asyncio.start_unix_server(self._connection, sock=sock, limit=protocol.MAX_REQUEST_BYTES)
        warm = [asyncio.create_task(self._connect(name)) for name in connect]
        watch = asyncio.create_task(self._watch(inode))
        log.info("svc agent %s (pid %d) listening on %s", __version__, os.getpid(), self.place.socket)
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for task in (*warm, watch):
                task.cancel()
            await asyncio.gather(*warm, watch, return_exceptions=True)
            await self.sessions.close()
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.place.socket).st_ino == inode:  # never remove a newer agent's socket
                    self.place.socket.unlink()

    async def _connect(self, name: str) -> None:
        try:
            await self.host.transport(name).connect()
        except SvcError as exc:
            log.warning("could not connect %s at start: %s", name, exc)

    async def _watch(self, inode: int) -> None:
        while True:
            await asyncio.sleep(min(WATCH_SECONDS, self.idle_seconds or WATCH_SECONDS))
            try:
                if os.stat(self.place.socket).st_ino != inode:
                    self.stop("another process replaced the socket")
            except FileNotFoundError:
                self.stop("the socket was removed")
            idle = time.monotonic() - max(self._last_active, self.sessions.last_busy)
            busy = self._active or self.sessions.busy  # a session served here keeps its agent
            if self.idle_seconds is not None and not busy and idle >= self.idle_seconds:
                self.stop(f"idle for {idle / 60:.1f} min")

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            uid = peer_uid(writer)
            if uid != os.getuid():
                log.warning("refused a connection from uid %d", uid)
                return
            self._active += 1
            try:
                await self._exchange(reader, writer)
            finally:
                self._active -= 1
                self._last_active = time.monotonic()
        except (OSError, ValueError, asyncio.IncompleteReadError, TimeoutError):
            pass  # the CLI went away (it runs the command itself), or sent a 'go' line over the limit
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def send(body: dict[str, Any]) -> None:
            writer.write(protocol.message(body))
            await writer.drain()

        try:
            line = await asyncio.wait_for(reader.readline(), WAIT_FOR_GO)
        except ValueError:  # longer than the limit
            await send({"error": error_reply(protocol.BadRequest("a request may not exceed 8 MiB"))})
            return
        try:
            request = protocol.parse_request(line)
        except protocol.BadRequest as exc:
            log.warning("bad request: %s", exc)
            await send({"error": error_reply(exc)})
            return
        declined = self._declines(request)
        if declined:
            log.info("%s declined: %s", request.call, declined)
            await send({"declined": declined})
            return
        await send({"ready": True})
        go = await asyncio.wait_for(reader.readline(), WAIT_FOR_GO)
        if go.strip() != protocol.message({"go": True}).strip():
            log.info("%s abandoned by the CLI before it began", request.call)
            return
        await send(await self._run(request))

    def _declines(self, request: protocol.Request) -> str | None:
        if request.version != __version__:
            self.stop(f"a CLI of svc {request.version} asked (this is {__version__})")
            return f"this agent runs svc {__version__}, not {request.version}"
        if request.fingerprint != self.place.fingerprint:
            return "this agent serves another setup (config, state or SVC_* variables differ)"
        if "transport" not in request.args:  # ping, stop
            return None
        return self._profiles_invalid() or self._not_remote(request.args["transport"])

    def _not_remote(self, transport: str) -> str | None:
        """Why a transport that runs on this machine is left to the CLI (``None`` for a remote one)."""
        try:
            spec = self.host.transports.spec(transport)
        except SvcError:  # an unknown transport: the call says so where the command would (after bad input)
            return None
        if not spec.remote:
            return f"transport {spec.name!r} runs on this machine, in the caller's environment"
        return None

    def _profiles_invalid(self) -> str | None:
        """The profiles file's error when it is not valid now: the CLI reports it as it would without an agent
        (the agent's own watch would go on with the last valid profiles, as a server does)."""
        signature = self.host.profiles.signature()
        if signature != self._profiles_checked:
            self._profiles_checked = signature
            try:
                self.host.profiles.host_config(env=os.environ)
                self._profiles_error = None
            except ConfigError as exc:
                self._profiles_error = f"the profiles file is not valid: {exc}"
        return self._profiles_error

    async def _run(self, request: protocol.Request) -> dict[str, Any]:
        started = time.monotonic()
        if request.call == "ping":
            return {"result": self.describe()}
        if request.call == "stop":
            self.stop("asked by svc agent stop")
            return {"result": {"pid": os.getpid()}}
        transport = request.args["transport"]
        self.requests += 1
        self.served.add(transport)
        try:
            if request.call == "session_open":
                result = await self.sessions.open(transport, request.args["job_id"], wait=request.args["wait"])
            else:
                result = await CALLS[request.call](self.host, Path(request.cwd), **request.args)
            reply: dict[str, Any] = {"result": result}
            outcome = "ok"
        except Exception as exc:
            reply = {"error": error_reply(exc)}
            outcome = reply["error"]["kind"]
            if outcome == "internal":
                log.exception("%s on %s failed", request.call, transport)
        finally:
            if not self.sessions.busy:  # a submit's poke started a loop: the agent polls only for its sessions
                await self.host.monitor.stop()
        log.info("%s on %s: %s in %.3f s", request.call, transport, outcome, time.monotonic() - started)
        return reply

    def describe(self) -> dict[str, Any]:
        """What ``svc agent status`` shows."""
        return {
            "pid": os.getpid(),
            "version": __version__,
            "socket": str(self.place.socket),
            "log": str(self.place.log_file),
            "started_at": datetime.fromtimestamp(self.started_at, UTC).isoformat(timespec="seconds"),
            "idle_minutes": None if self.idle_seconds is None else self.idle_seconds / 60,
            "requests": self.requests,
            "transports": sorted(self.served),
            "sessions": self.sessions.describe(),
        }


def run(place: Place, *, idle_seconds: float | None, connect: list[str]) -> None:
    """Be the agent of ``place`` until stopped or idle: lock, log, listen, open the store, serve, clean up.
    ``AlreadyRunning`` when another agent of this setup runs; ``ConfigError`` for an unusable directory."""
    place.secure_dir(create=True)
    lock = take_lock(place)
    try:
        _log_to(place.log_file)
        sock = listen(place)
        asyncio.run(_serve(place, sock, idle_seconds=idle_seconds, connect=connect))
    except SvcError as exc:  # an unusable store or profiles file: `svc agent start` shows this line
        log.error("the svc agent stopped: %s", exc)
        raise
    except Exception:
        log.exception("the svc agent stopped on an error")
        raise
    finally:
        place.lock.unlink(missing_ok=True)  # still holding it: whoever opened this file finds it gone, see take_lock
        os.close(lock)


async def _serve(place: Place, sock: socket.socket, *, idle_seconds: float | None, connect: list[str]) -> None:
    host = Host.create("cli")
    try:
        await asyncio.to_thread(lambda: host.store)  # the ORM's import and the migrations check, once
        await Agent(place, host, idle_seconds=idle_seconds).serve(sock, connect)
    finally:
        sock.close()
        await host.close()
        log.info("stopped")


def _log_to(path: Path) -> None:
    """Log to ``path`` (mode 0600, this run only); asyncssh's per-channel lines stay out."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    handler = logging.StreamHandler(os.fdopen(fd, "w", buffering=1))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
