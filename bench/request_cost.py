"""What svc's HTTP stack costs per request: a bare FastAPI app serving the same route, next to svc's app.

svc's app puts its stack around every route: the Host allow-list, the token or session check, the Origin rule,
the body limit, the ``{detail}`` error handlers, ``Cache-Control: no-store`` on API answers, and (under
``svc serve``) uvicorn's access log with the login-code filter. The bare app is ``FastAPI()`` with the same
routers and the same ``Host``, nothing else. Both serve a cached GET (``GET /api/jobs`` from the shared
snapshot, ``local`` transport on the dev cluster), one request after another, timed with ``perf_counter`` (wall)
and by the CPU time the serving process spent (``process_time`` in process, ``/proc/<pid>/stat`` of the server
over uvicorn: less sensitive to other work on the machine than the wall time):

- in process, through ``httpx.ASGITransport`` (no socket; the client's own cost is in both columns);
- over a real uvicorn on loopback, access log on (``--log-level info``, as ``svc serve`` runs by default), the
  server in its own process and a bare keep-alive HTTP/1.1 client in this one.

svc's app is asked with the Bearer token and with a dashboard session cookie. Each (app, way) is timed in
``--rounds`` interleaved rounds of ``--requests`` requests; the table gives the median of the round medians and
their range, the median CPU per request, and the differences to the bare app (what the stack costs).

    python bench/request_cost.py [--requests 500] [--rounds 5] [--path /api/jobs]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from fastapi import FastAPI

from svc_host.api.app import create_app
from svc_host.api.security import ServerSecurity
from svc_host.host import Host
from svc_host.testing.serve import free_port, isolated_env, running_serve

TOKEN = "bench-cost-token-0123456789abcdef"  # noqa: S105 (a throwaway token for a loopback bench server)

Ask = Callable[[], Awaitable[int]]
Clock = Callable[[], float]
"""CPU seconds the serving process has used so far."""


def process_cpu(pid: int) -> Clock:
    """The CPU clock of process ``pid`` (user + system, from ``/proc``; 10 ms ticks)."""
    tick = os.sysconf("SC_CLK_TCK")

    def used() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    return used


def bare_app(host: Host) -> FastAPI:
    """``FastAPI()`` with svc's routers and ``Host`` (its lifespan too) but none of svc's stack."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await host.start()
        yield
        await host.close()

    app = FastAPI(lifespan=lifespan)
    app.state.host = host
    for router in host.plugins.routers():
        app.include_router(router)
    return app


def serve_bare(port: int) -> None:
    """This process: the bare app on uvicorn, access log on, as ``svc serve --log-level info`` runs svc's."""
    import uvicorn

    host = Host.create("web")
    uvicorn.run(bare_app(host), host="127.0.0.1", port=port, log_level="info")


class Connection:
    """One keep-alive HTTP/1.1 connection, as cheap a client as Python has."""

    def __init__(self, port: int, headers: dict[str, str]) -> None:
        self.port = port
        self.head = "".join(f"{name}: {value}\r\n" for name, value in {"Host": f"127.0.0.1:{port}", **headers}.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> int:
        try:
            return await self._get(path)
        except (asyncio.IncompleteReadError, ConnectionError):  # idle past uvicorn's keep-alive (5 s): closed
            self.reader = self.writer = None
            return await self._get(path)

    async def _get(self, path: str) -> int:
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"GET {path} HTTP/1.1\r\n{self.head}\r\n".encode())
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        length = next(int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length:"))
        await self.reader.readexactly(length)
        return int(head[0].split()[1])


async def timed(ask: Ask, requests: int, cpu: Clock = time.process_time) -> tuple[float, float]:
    """The median seconds of ``requests`` requests one after another, and the CPU seconds per request."""
    taken = []
    cpu_before = cpu()
    for _ in range(requests):
        started = time.perf_counter()
        status = await ask()
        taken.append(time.perf_counter() - started)
        if status != 200:
            raise RuntimeError(f"answered {status}")
    return statistics.median(taken), (cpu() - cpu_before) / requests


async def session_cookie(client: httpx.AsyncClient) -> str:
    answer = await client.post("/api/auth/login", json={"token": TOKEN})
    answer.raise_for_status()
    return next(iter(answer.cookies.values()))


async def in_process(path: str, requests: int, rounds: int) -> Timings:
    host = Host.create("web")
    svc = create_app(host, security=ServerSecurity(token=TOKEN))
    bare = bare_app(host)
    base = "http://127.0.0.1:8000"
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=bare), base_url=base) as bare_client,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=svc), base_url=base) as svc_client,
    ):
        cookie = {"Cookie": f"svc_session_8000={await session_cookie(svc_client)}"}
        ways: dict[str, tuple[Ask, Clock]] = {
            "bare FastAPI": (lambda: _status(bare_client.get(path)), time.process_time),
            "svc, Bearer token": (lambda: _status(svc_client.get(path, headers=bearer)), time.process_time),
            "svc, session cookie": (lambda: _status(svc_client.get(path, headers=cookie)), time.process_time),
        }
        try:
            return await _rounds(ways, requests, rounds)
        finally:
            await host.close()


async def _status(answer: Awaitable[httpx.Response]) -> int:
    return (await answer).status_code


async def over_uvicorn(svc: tuple[int, int], bare: tuple[int, int], path: str, requests: int, rounds: int) -> Timings:
    """``svc`` and ``bare``: (port, pid) of each server."""
    svc_port, bare_port = svc[0], bare[0]
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{svc_port}") as client:
        cookie = await session_cookie(client)
    plain = Connection(bare_port, {})
    bearer = Connection(svc_port, {"Authorization": f"Bearer {TOKEN}"})
    session = Connection(svc_port, {"Cookie": f"svc_session_{svc_port}={cookie}"})
    ways: dict[str, tuple[Ask, Clock]] = {
        "bare FastAPI": (lambda: plain.get(path), process_cpu(bare[1])),
        "svc, Bearer token": (lambda: bearer.get(path), process_cpu(svc[1])),
        "svc, session cookie": (lambda: session.get(path), process_cpu(svc[1])),
    }
    return await _rounds(ways, requests, rounds)


Timings = dict[str, list[tuple[float, float]]]
"""Per way: (median wall seconds, CPU seconds per request) of each round."""


async def _rounds(ways: dict[str, tuple[Ask, Clock]], requests: int, rounds: int) -> Timings:
    for ask, cpu in ways.values():  # warm up: routes, snapshot, connections
        await timed(ask, 20, cpu)
    timings: Timings = {name: [] for name in ways}
    for _ in range(rounds):
        for name, (ask, cpu) in ways.items():
            timings[name].append(await timed(ask, requests, cpu))
    return timings


def report(title: str, timings: Timings) -> None:
    print(title)
    bare_wall = statistics.median(wall for wall, _ in timings["bare FastAPI"])
    bare_cpu = statistics.median(cpu for _, cpu in timings["bare FastAPI"])
    for name, rounds in timings.items():
        walls = [wall * 1000 for wall, _ in rounds]
        wall, cpu = statistics.median(walls), statistics.median(cpu for _, cpu in rounds) * 1000
        extra = ""
        if name != "bare FastAPI":
            extra = f"   stack: wall {wall - bare_wall * 1000:+.3f} ms, cpu {cpu - bare_cpu * 1000:+.3f} ms"
        print(
            f"  {name:<20} wall median {wall:6.3f} ms (rounds {min(walls):.3f}-{max(walls):.3f})  cpu {cpu:6.3f} ms"
            f"{extra}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--path", default="/api/jobs", help="the cached GET to time")
    parser.add_argument("--serve-bare", type=int, metavar="PORT", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve_bare:
        serve_bare(options.serve_bare)
        return

    with tempfile.TemporaryDirectory(prefix="svc-cost-") as raw:
        root = Path(raw)
        env = isolated_env(root, token=TOKEN)
        os.environ.update(env)  # the in-process Host reads the same throwaway home
        for key in [key for key in os.environ if key.startswith("SVC_") and key not in env]:
            del os.environ[key]
        print(f"{options.path}: {options.rounds} rounds of {options.requests} requests one after another")
        report(
            "in process (httpx.ASGITransport):", asyncio.run(in_process(options.path, options.requests, options.rounds))
        )
        log = (root / "access.log").open("w")
        bare_port = free_port()
        bare = subprocess.Popen(
            [sys.executable, __file__, "--serve-bare", str(bare_port)], env=env, stderr=log, stdout=log
        )
        try:
            with running_serve(base_env=env, log_level="info", stderr=log, stdout=log, wait=60) as server:
                _wait_for(bare_port)
                ends = ((server.port, server.process.pid), (bare_port, bare.pid))
                medians = asyncio.run(over_uvicorn(*ends, options.path, options.requests, options.rounds))
                report("uvicorn on loopback, access log on:", medians)
        finally:
            bare.terminate()
            bare.wait(30)
            log.close()


def _wait_for(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"the bare app did not answer on port {port}")


if __name__ == "__main__":
    main()
