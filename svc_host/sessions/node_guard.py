"""The node side of an interactive session: run the session's app and let in only requests that carry its secret.

svc copies this file into the session's directory and the batch job runs ``python3 guard.py app.json`` on the
compute node, so it is one file of the standard library only (Python 3.8 or later, no svc import). Other users of
the cluster can reach any port of the node; the app listens on 127.0.0.1 and this guard on the node's public port:

1. bind ``0.0.0.0:0`` (the public port), pick a free port on 127.0.0.1 for the app, write ``endpoint.json``
   (``{"host", "port", "job_id"}``) atomically in the session directory: svc reads it to know where to connect;
2. start the app from ``app.json`` with no shell, its placeholders replaced (``substitute``: ``{port}``,
   ``{base_path}``, ``{base_prefix}`` (the base path without its last ``/``), ``{session_dir}``, and ``{secret}``
   in env values only; ``{{``/``}}`` are literal braces; nothing is evaluated). With ``strip_base_path`` the
   session's base path is cut from each request's target, for an app that serves at ``/``;
3. for every request on every connection, read its head (bounded size and time) and require the header
   ``X-Svc-Session-Secret`` to equal the secret (``hmac.compare_digest``): without it the answer is ``403`` and
   the connection closes before anything reaches the app; with it the header is removed and the request goes to
   the app. A request asking for an ``Upgrade`` (WebSocket) is the last one checked: from there bytes are piped
   both ways, as a WebSocket needs;
4. when the app exits, write ``exit.json`` (``{"code": N}``) and exit with the app's code (128 + signal when a
   signal ended it); SIGTERM, SIGINT and SIGHUP are forwarded to the app's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

SECRET_HEADER = b"x-svc-session-secret"
MAX_HEAD = 64 * 1024
"""A request head longer than this is refused (431): the guard never buffers more of a stranger's bytes."""
FIRST_HEAD_SECONDS = 30.0
"""A new connection must send its first request head within this time."""
NEXT_HEAD_SECONDS = 600.0
"""An authenticated keep-alive connection may wait this long between requests."""
CHUNK = 64 * 1024


def substitute(text: str, values: dict[str, str]) -> str:
    """``text`` with ``{name}`` replaced by ``values[name]``, ``{{`` by ``{`` and ``}}`` by ``}``, left to right.

    Any other brace (a lone one, an unknown or missing name) raises ``ValueError``: svc refuses such a launch
    before submitting it, so a user's text, whose braces svc doubles, can never turn into a placeholder."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "{}" and text[i : i + 2] == ch * 2:
            out.append(ch)
            i += 2
        elif ch == "{":
            end = text.find("}", i)
            name = text[i + 1 : end] if end > 0 else ""
            if name not in values:
                shown = text[i : end + 1] if end > 0 else text[i:]
                raise ValueError(f"unknown placeholder {shown!r} (known: {', '.join(sorted(values))})")
            out.append(values[name])
            i = end + 1
        elif ch == "}":
            raise ValueError(f"a lone '}}' at character {i} of {text!r} (write '}}}}' for a brace)")
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(str(tmp), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(data, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(str(tmp), str(path))


def free_local_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def parse_head(head: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The request line and the header fields (name lowercased, value stripped) of a head ending in CRLF CRLF."""
    lines = head[:-4].split(b"\r\n")
    fields = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name.strip() or line[:1] in (b" ", b"\t"):
            raise ValueError("malformed header line")
        fields.append((name.strip().lower(), value.strip()))
    return lines[0], fields


def authorised(fields: list[tuple[bytes, bytes]], secret: bytes) -> bool:
    given = [value for name, value in fields if name == SECRET_HEADER]
    return len(given) == 1 and hmac.compare_digest(given[0], secret)


def without_secret(head: bytes) -> bytes:
    lines = head[:-4].split(b"\r\n")
    kept = [lines[0]] + [line for line in lines[1:] if line.partition(b":")[0].strip().lower() != SECRET_HEADER]
    return b"\r\n".join(kept) + b"\r\n\r\n"


def body_framing(fields: list[tuple[bytes, bytes]]) -> tuple[str, int]:
    """How the request's body is delimited: ("length", n), ("chunked", 0), or ValueError for an ambiguous one
    (both framings, or lengths that disagree: the ways to smuggle a second request past a check)."""
    lengths = {value for name, value in fields if name == b"content-length"}
    codings = [value.lower() for name, value in fields if name == b"transfer-encoding"]
    if codings:
        if lengths or codings != [b"chunked"]:
            raise ValueError("unsupported body framing")
        return "chunked", 0
    if len(lengths) > 1 or any(not value.isdigit() for value in lengths):
        raise ValueError("bad Content-Length")
    return "length", int(lengths.pop()) if lengths else 0


def wants_upgrade(fields: list[tuple[bytes, bytes]]) -> bool:
    tokens = [token.strip() for name, value in fields if name == b"connection" for token in value.lower().split(b",")]
    return b"upgrade" in tokens and any(name == b"upgrade" for name, _ in fields)


async def copy_exactly(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: int) -> None:
    while count > 0:
        data = await reader.read(min(count, CHUNK))
        if not data:
            raise ConnectionError("the client closed the connection inside a request body")
        writer.write(data)
        await writer.drain()
        count -= len(data)


async def copy_chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        line = await reader.readuntil(b"\r\n")
        size = int(line.split(b";")[0].strip(), 16)
        writer.write(line)
        if size == 0:
            while True:  # trailer fields, then the empty line that ends the body
                trailer = await reader.readuntil(b"\r\n")
                writer.write(trailer)
                if trailer == b"\r\n":
                    await writer.drain()
                    return
        await copy_exactly(reader, writer, size + 2)


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof() and not writer.is_closing():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


class Guard:
    def __init__(self, app_json: Path) -> None:
        self.session_dir = app_json.resolve().parent
        self.app = json.loads(app_json.read_text())
        self.secret = (self.session_dir / self.app.get("secret_file", "secret")).read_text().strip()
        self.app_port = free_local_port()
        job_id = os.environ.get("SLURM_JOB_ID", "")
        self.job_id = job_id if job_id.replace("_", "").isdigit() else None
        self.base_path = str(self.app.get("base_path", "/")).replace("{job_id}", self.job_id or "0")
        self.process: asyncio.subprocess.Process | None = None

    def command(self) -> tuple[list[str], dict[str, str]]:
        """The app's argv and environment with the placeholders replaced (the secret only in the environment)."""
        values = {
            "port": str(self.app_port),
            "base_path": self.base_path,
            "base_prefix": self.base_path.rstrip("/"),
            "session_dir": str(self.session_dir),
        }
        argv = [substitute(word, values) for word in self.app["argv"]]
        values["secret"] = self.secret
        env = dict(os.environ)
        extra_path = [substitute(entry, values) for entry in self.app.get("path", [])]
        env["PATH"] = os.pathsep.join([*extra_path, env.get("PATH", os.defpath)])
        env.update({name: substitute(value, values) for name, value in self.app.get("env", {}).items()})
        return argv, env

    async def serve(self) -> int:
        argv, env = self.command()
        server = await asyncio.start_server(self.handle, host="0.0.0.0", port=0, limit=MAX_HEAD)  # noqa: S104 - the node's public port, guarded
        port = server.sockets[0].getsockname()[1]
        host = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
        write_json_atomically(self.session_dir / "endpoint.json", {"host": host, "port": port, "job_id": self.job_id})
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, env=env, stdin=asyncio.subprocess.DEVNULL, start_new_session=True
            )
        except OSError as exc:
            print(f"svc-session-guard: cannot start {argv[0]!r}: {exc}", file=sys.stderr, flush=True)
            write_json_atomically(self.session_dir / "exit.json", {"code": 127})
            return 127
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(signum, self.forward, signum)
        code = await self.process.wait()
        server.close()
        exit_code = code if code >= 0 else 128 - code
        write_json_atomically(self.session_dir / "exit.json", {"code": exit_code})
        return exit_code

    def forward(self, signum: int) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)

    async def handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        """Serve one connection: check each request's secret before it reaches the app, pipe the answers back."""
        app: tuple[asyncio.StreamWriter, asyncio.Future[None]] | None = None
        timeout = FIRST_HEAD_SECONDS
        try:
            while True:
                request = await self.next_request(client_reader, timeout)
                if isinstance(request, str):
                    await self.refuse(client_writer, request, app)
                    return
                head, fields, (framing, length) = request
                if app is None:
                    try:
                        app_reader, app_writer = await asyncio.open_connection("127.0.0.1", self.app_port)
                    except OSError:
                        await self.refuse(client_writer, "502 Bad Gateway", app)
                        return
                    app = (app_writer, asyncio.ensure_future(pipe(app_reader, client_writer)))
                app[0].write(self.for_app(head))
                if wants_upgrade(fields):  # a WebSocket: from here on the bytes are not HTTP requests
                    await pipe(client_reader, app[0])
                    break
                if framing == "chunked":
                    await copy_chunked(client_reader, app[0])
                else:
                    await copy_exactly(client_reader, app[0], length)
                timeout = NEXT_HEAD_SECONDS
        except (ConnectionError, OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError):  # noqa: UP041 - distinct from TimeoutError before Python 3.11
            pass  # the client went away, stalled or broke the framing: end the connection
        except asyncio.CancelledError:  # the app has exited and the guard is ending
            client_writer.close()
            return
        if app is not None:  # let the app finish its answer to a client that closed its side
            if app[0].can_write_eof() and not app[0].is_closing():
                app[0].write_eof()
            await asyncio.wait([app[1]], timeout=NEXT_HEAD_SECONDS)
            app[0].close()
        client_writer.close()

    def for_app(self, head: bytes) -> bytes:
        """The head as the app gets it: without the secret, and at ``/`` for an app that serves there."""
        head = without_secret(head)
        prefix = self.base_path.rstrip("/").encode()
        if not (self.app.get("strip_base_path") and prefix):
            return head
        start = head.find(b" ") + 1
        target = head[start:]
        if target.startswith(prefix + b"/"):
            target = target[len(prefix) :]
        elif target.startswith((prefix + b" ", prefix + b"?")):
            target = b"/" + target[len(prefix) :]
        return head[:start] + target

    async def next_request(
        self, reader: asyncio.StreamReader, timeout: float
    ) -> tuple[bytes, list[tuple[bytes, bytes]], tuple[str, int]] | str:
        """The next request's head, fields and body framing, or the status that refuses it."""
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        except asyncio.LimitOverrunError:
            return "431 Request Header Fields Too Large"
        try:
            _, fields = parse_head(head)
            framing = body_framing(fields)
        except ValueError:
            return "400 Bad Request"
        if not authorised(fields, self.secret.encode()):
            return "403 Forbidden"
        return head, fields, framing

    async def refuse(
        self,
        writer: asyncio.StreamWriter,
        status: str,
        app: tuple[asyncio.StreamWriter, asyncio.Future[None]] | None,
    ) -> None:
        """Answer ``status`` and close: nothing more of this connection reaches the app."""
        if app is not None:
            app[0].close()
            app[1].cancel()
        body = status.encode() + b"\n"
        writer.write(
            b"HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n" % (status.encode(), len(body))
        )
        writer.write(b"Connection: close\r\n\r\n" + body)
        with contextlib.suppress(ConnectionError, OSError):
            await writer.drain()
        writer.close()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 guard.py APP_JSON", file=sys.stderr)
        return 2
    try:
        guard = Guard(Path(argv[1]))
        guard.command()
    except (OSError, ValueError, KeyError) as exc:
        print(f"svc-session-guard: cannot start the app: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(guard.serve())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
