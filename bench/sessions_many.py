"""Twenty sessions open at once: does the dashboard's ``GET /api/jobs`` slow down?

A real ``svc serve`` (API, monitor, session watch, sessions' origin), one dev cluster. The p50 and p95 of
``--requests`` sequential ``GET /api/jobs`` (a token client on a kept connection, as the dashboard's page asks):

1. **none**: before any session;
2. **open**: while ``--sessions`` command sessions (``python3 -m http.server`` on ``$SVC_SESSION_PORT``, 1 CPU,
   64 MB, each in a directory of its own) are open: as many ready as the node's CPUs allow, the rest queued (the
   watch then ticks every 0.25 s and reads the waiting sessions' ``endpoint.json``, the monitor asks the scheduler
   every second);
3. **traffic**: the same, while ``--traffic`` of the ready sessions are each asked for a page through the sessions'
   origin 10 times a second (one client per session, entered with the link the API mints);
4. **after**: once every session is stopped and ended.

Before each phase's requests, the server's own CPU use is read over 5 s with no request from here (what the
watch and the monitor cost, and in "traffic" the proxying). The goal (issue 27): "open" and "traffic" within
1.2x of "none" (and of "after", the same machine minutes later: the dev machine is shared, so read the two
together). Every session is stopped at the end, whatever happened.

Run from the repository root: ``python bench/sessions_many.py --cluster ssh`` (over the dev sshd; ``local``: this
machine's Slurm through the local transport; ``ssh24``: lab24). Needs ``scripts/devcluster up``; it holds every CPU
of the dev node for about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from session_start import AUTH, TOKEN, add_profile, dev_profile

from svc_host.testing.serve import free_port, isolated_env, start_serve

COMMAND = (
    'cd "$(mktemp -d)" && echo page > page.txt && exec python3 -m http.server "$SVC_SESSION_PORT" --bind 127.0.0.1'
)
"""A cheap app: Python's file server, in a directory of its own (never the session's files)."""


PAUSE = 0.1
"""Seconds a browsing client waits between pages (10 pages a second per session: a busy user, a notebook's polls)."""
IDLE_SECONDS = 5.0
"""How long the server's CPU is read, with no request, in each phase."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def idle_cpu(pid: int) -> float:
    """The server's CPU use (percent of one core) over ``IDLE_SECONDS`` with no request from here."""
    before, started = cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(IDLE_SECONDS)
    return 100 * (cpu_seconds(pid) - before) / (time.monotonic() - started)


def figures(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), statistics.quantiles(times, n=20)[-1]


async def jobs_times(api: httpx.AsyncClient, cluster: str, requests: int) -> list[float]:
    """Milliseconds of ``requests`` sequential ``GET /api/jobs`` (after 20 not counted)."""
    times: list[float] = []
    for index in range(requests + 20):
        started = time.perf_counter()
        answer = await api.get("/api/jobs", params={"transport": cluster})
        answer.raise_for_status()
        if index >= 20:
            times.append((time.perf_counter() - started) * 1000)
    return times


async def views(api: httpx.AsyncClient, cluster: str) -> dict[str, dict[str, Any]]:
    listed = (await api.get("/api/sessions", params={"transport": cluster})).json()
    return {view["job_id"]: view for view in listed}


async def settle(api: httpx.AsyncClient, cluster: str, job_ids: list[str], timeout: float) -> None:
    """Until none of ``job_ids`` is starting and as many are ready as 10 s ago (the node is full; the rest queue;
    other users' jobs may hold some of its CPUs), or ``timeout`` passes."""
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        states = [view["state"] for job_id, view in (await views(api, cluster)).items() if job_id in job_ids]
        seen.append(states.count("ready") if "starting" not in states else -1)
        if len(seen) > 20 and seen[-1] > 0 and len(set(seen[-21:])) == 1:
            return
        await asyncio.sleep(0.5)
    raise SystemExit(f"sessions not settled within {timeout:.0f} s: {states}")


async def browse(api: httpx.AsyncClient, cluster: str, job_id: str, stop: asyncio.Event, counted: list[int]) -> None:
    """Ask one ready session for its page through the sessions' origin until ``stop``, as a browser would."""
    url = (await api.post(f"/api/sessions/{job_id}/link", params={"transport": cluster})).json()["url"]
    async with httpx.AsyncClient(timeout=60) as browser:
        landing = await browser.get(url)
        page = landing.headers["location"].split("?")[0] + "page.txt"
        base = url.split("/s/")[0]
        while not stop.is_set():
            answer = await browser.get(base + page)
            answer.raise_for_status()
            counted.append(1)
            await asyncio.sleep(PAUSE)


async def start_all(api: httpx.AsyncClient, cluster: str, count: int, job_ids: list[str]) -> None:
    """Start ``count`` command sessions, adding each job id to ``job_ids`` as it is accepted."""
    for _ in range(count):
        fields = {"command": COMMAND}
        body = {
            "kind": "command",
            "fields": fields,
            "transport": cluster,
            "cpus": 1,
            "memory": "64M",
            "time_limit": "10",
        }
        started = await api.post("/api/sessions", json=body)
        started.raise_for_status()
        job_ids.append(started.json()["job_id"])


async def with_traffic(api: httpx.AsyncClient, cluster: str, ready: list[str], pid: int) -> tuple[float, list[float]]:
    """The server's CPU with no request of ours, and the ``/api/jobs`` times, while ``ready`` are browsed."""
    stop, counted = asyncio.Event(), list[int]()
    browsers = [asyncio.create_task(browse(api, cluster, job_id, stop, counted)) for job_id in ready]
    await asyncio.sleep(1)
    cpu = await idle_cpu(pid)
    began, before = time.monotonic(), len(counted)
    times = await jobs_times(api, cluster, OPTIONS.requests)
    rate = (len(counted) - before) / (time.monotonic() - began)
    stop.set()
    await asyncio.gather(*browsers)
    print(f"traffic: {len(browsers)} sessions, {rate:.0f} proxied pages/s in all")
    return cpu, times


async def stop_all(api: httpx.AsyncClient, cluster: str, job_ids: list[str]) -> None:
    """Stop every session of ``job_ids`` and wait (up to 2 minutes) until they are ended."""
    for job_id in job_ids:
        await api.delete(f"/api/sessions/{job_id}", params={"transport": cluster})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if {v["state"] for k, v in (await views(api, cluster)).items() if k in job_ids} == {"ended"}:
            return
        await asyncio.sleep(0.5)


async def phases(
    api: httpx.AsyncClient, cluster: str, pid: int, job_ids: list[str]
) -> dict[str, tuple[float, list[float]]]:
    """Each phase's (server CPU with no request, ``/api/jobs`` times)."""
    found = {"none": (await idle_cpu(pid), await jobs_times(api, cluster, OPTIONS.requests))}
    await start_all(api, cluster, OPTIONS.sessions, job_ids)
    await settle(api, cluster, job_ids, 300)
    states = {k: v["state"] for k, v in (await views(api, cluster)).items() if k in job_ids}
    ready = [k for k, state in states.items() if state == "ready"]
    print(f"{len(job_ids)} sessions: {len(ready)} ready, {list(states.values()).count('queued')} queued")
    found["open"] = (await idle_cpu(pid), await jobs_times(api, cluster, OPTIONS.requests))
    found["traffic"] = await with_traffic(api, cluster, ready[: OPTIONS.traffic], pid)
    await stop_all(api, cluster, job_ids)
    job_ids.clear()
    found["after"] = (await idle_cpu(pid), await jobs_times(api, cluster, OPTIONS.requests))
    return found


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="svc-bench-") as root:
        env = {**isolated_env(Path(root), token=TOKEN), "SVC_AGENT": "off"}
        profile = None if OPTIONS.cluster == "local" else dev_profile("22.05" if OPTIONS.cluster == "ssh" else "24.11")
        if profile is not None:
            add_profile(env, profile)
        cluster = "local" if profile is None else "dev"
        os.environ["HOME"] = env["HOME"]
        server = start_serve("--sessions-port", str(free_port()), env=env, base_env=env, cwd=root)
        job_ids: list[str] = []
        try:
            async with httpx.AsyncClient(base_url=server.base, headers=AUTH, timeout=120) as api:
                found = await phases(api, cluster, server.process.pid, job_ids)
        finally:
            if job_ids:  # left open by a failure above: stop them all
                with contextlib.suppress(Exception), httpx.Client(base_url=server.base, headers=AUTH) as api:
                    for job_id in job_ids:
                        api.delete(f"/api/sessions/{job_id}", params={"transport": cluster})
            server.stop()
    base = statistics.mean([figures(found[label][1])[1] for label in ("none", "after")])
    load = os.getloadavg()[0]
    print(f"GET /api/jobs, {OPTIONS.requests} sequential requests per phase ({OPTIONS.cluster}, load {load:.1f})")
    for label, (cpu, times) in found.items():
        p50, p95 = figures(times)
        print(
            f"  {label:8} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   p95 / mean p95 of none and after {p95 / base:.2f}x"
            f"   server CPU with no request {cpu:5.1f} %"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=["local", "ssh", "ssh24"], default="ssh")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--traffic", type=int, default=3, help="ready sessions browsed during the traffic phase")
    parser.add_argument("--requests", type=int, default=500)
    OPTIONS = parser.parse_args()
    asyncio.run(main())
