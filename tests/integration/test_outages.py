"""Outages survived on the dev cluster: slurmctld down, slurmdbd down, sshd restarted, the store's disk full.

These tests stop daemons every other test needs, so they carry the ``outage`` marker: ``make test`` runs them
on their own, one after another, after the main run. Each stops one daemon with ``scripts/devcluster stop``
and starts it again with ``scripts/devcluster up`` in a ``finally``, whatever the test's outcome. (The kill -9
restart of a server is in ``test_servers_on_one_store.py``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sqlite3
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import select

from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.services import jobs
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store
from svc_host.store.tables import WorkflowRunRecord
from svc_host.sweeps.cells import SweepRequest
from svc_host.sweeps.matrix import parse_sweep
from svc_host.sweeps.orchestrator import SweepOrchestrator
from svc_host.testing.plugin import skip_or_fail
from svc_host.testing.waiting import eventually
from svc_host.workflows.engine import RunChange, WorkflowEngine
from svc_host.workflows.prepare import RunRequest

pytestmark = [pytest.mark.cluster, pytest.mark.outage, pytest.mark.slow]

DEVCLUSTER = Path(__file__).resolve().parents[2] / "scripts" / "devcluster"
ENDED_BADLY = {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"}


async def command(*argv: str) -> tuple[int, str]:
    """Exit code and output (stdout and stderr) of ``argv``, without blocking the event loop."""
    process = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    return process.returncode or 0, out.decode(errors="replace")


async def devcluster(*args: str) -> None:
    code, out = await command("bash", str(DEVCLUSTER), *args)
    assert code == 0, f"devcluster {' '.join(args)} failed: {out[-2000:]}"


@contextlib.asynccontextmanager
async def stopped(daemon: str) -> AsyncIterator[None]:
    """``daemon`` stopped for the body; started again (``devcluster up``) even when the body fails."""
    if os.geteuid() != 0:
        skip_or_fail("stopping a dev cluster daemon needs root")
    await devcluster("stop", daemon)
    try:
        yield
    finally:
        await devcluster("up")


async def until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    await eventually(check, timeout=timeout, interval=0.5, what=what)


def states(host: Host) -> dict[str, str]:
    return {record.job_id: record.state for record in host.store.call(job_repo.history)}


async def close(engine: WorkflowEngine) -> None:
    await engine.close()
    await engine.host.monitor.stop()
    await engine.host.transports.close()


# -- slurmctld ------------------------------------------------------------------------------------------------

WAITING = """\
name: outage-wait
jobs:
  - {name: first, command: "sleep 15 && touch first.done"}
  - {name: then, command: "test -f first.done && touch then.done", depends_on: [first]}
"""


async def test_slurmctld_down_30_s_fails_no_job_and_states_catch_up(make_host: Callable[[], Host], work: Path) -> None:
    host = make_host()
    engine = WorkflowEngine(host, adopt_orphans=False)
    await engine.start()
    seen: list[job_repo.StateChange] = []

    async def record(changes: list[job_repo.StateChange]) -> None:
        seen.extend(changes)

    host.monitor.add_listener(record)
    try:
        (work / "wait.yaml").write_text(WAITING)
        snap = await engine.run(RunRequest(yaml_path=work / "wait.yaml"), triggered_by="cli")
        lone = await jobs.submit(host, JobDefinition(name="lone", command="sleep 10"), transport="local", source="cli")
        first = snap.jobs[0].job_id
        await until(lambda: states(host).get(first) == "RUNNING" == states(host).get(lone.job_id), "running")
        async with stopped("slurmctld"):
            ticks = host.monitor.ticks.get("local", 0)
            await asyncio.sleep(30)  # both jobs end meanwhile; slurmd keeps their ends for slurmctld
            during = states(host)
            assert host.monitor.ticks.get("local", 0) == ticks  # every query in the outage failed: no tick
        assert set(during.values()) <= {"PENDING", "RUNNING"}, during
        done = await engine.wait(snap.run.id, 120)
        assert done.run.status == "completed", done
        assert (work / "then.done").exists()
        await until(lambda: states(host)[lone.job_id] == "COMPLETED", "caught up")
        assert not [change for change in seen if change.to_state in ENDED_BADLY], seen
    finally:
        await close(engine)


# -- slurmdbd -------------------------------------------------------------------------------------------------


async def test_slurmdbd_down_sacct_fails_scontrol_tells_the_ends_and_nothing_fails_falsely(
    make_host: Callable[[], Host],
) -> None:
    host = make_host()
    try:
        async with stopped("slurmdbd"):
            ok = await jobs.submit(host, JobDefinition(name="ok", command="sleep 2"), transport="local", source="cli")
            bad = await jobs.submit(host, JobDefinition(name="bad", command="exit 3"), transport="local", source="cli")
            code, said = await command("sacct", "-n", "-X", "-j", ok.job_id)
            assert code != 0, said  # accounting really is unreachable
            await until(lambda: not host.store.call(job_repo.live_jobs), "both ended", timeout=90)
            ended = {record.job_id: (record.state, record.exit_code) for record in host.store.call(job_repo.history)}
        assert ended == {ok.job_id: ("COMPLETED", 0), bad.job_id: ("FAILED", 3)}  # exit codes from scontrol
    finally:
        await host.monitor.stop()
        await host.transports.close()


# -- sshd -----------------------------------------------------------------------------------------------------


async def sessions_of_this_process(port: int) -> list[int]:
    """Pids of the sshd processes serving this process's connections to ``port`` (found by socket pairs)."""
    code, listing = await command("ss", "-Htnp", "state", "established")
    assert code == 0, listing
    ours: set[str] = set()
    servers: dict[str, set[int]] = {}
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        local, peer = fields[2], fields[3]
        pids = {int(pid) for pid in re.findall(r"pid=(\d+)", line)}
        if peer.endswith(f":{port}") and os.getpid() in pids:
            ours.add(local)
        elif local.endswith(f":{port}"):
            servers.setdefault(peer, set()).update(pids)
    return sorted({pid for address in ours for pid in servers.get(address, set())})


async def submitted_in(remote: str, since: datetime) -> list[str]:
    """Every Slurm job started from ``remote`` since ``since`` (Slurm's word: catches a double submission)."""
    start = since.astimezone().strftime("%Y-%m-%dT%H:%M:%S")  # sacct reads local time
    code, out = await command("sacct", "-n", "-X", "-P", "-a", "-S", start, "-o", "JobID,WorkDir")
    assert code == 0, out
    return [line.split("|")[0] for line in out.splitlines() if line.endswith(f"|{remote}")]


async def test_sshd_restarted_mid_sweep_20_of_20_cells_complete_none_twice(
    dev_host: Host, dev_profile: SSHProfile
) -> None:
    engine = WorkflowEngine(dev_host, adopt_orphans=False)
    await engine.start()
    orchestrator = SweepOrchestrator(engine, adopt_orphans=False)
    await orchestrator.start()
    remote = f"/tmp/svc-outage-{uuid.uuid4().hex[:8]}"
    (Path.cwd() / "sweep.yaml").write_text(
        f"name: outage-grid\nargs: {{x: 0}}\njobs:\n  - {{name: cell, command: 'sleep 2', work_dir: {remote}}}\n"
    )
    started = datetime.now(UTC).replace(microsecond=0)
    launched: set[int] = set()

    async def count(change: RunChange) -> None:
        if change.sweep_id is not None:
            launched.add(change.run_id)

    engine.add_listener(count)
    killed: list[int] = []
    try:
        run = RunRequest(yaml_path=Path.cwd() / "sweep.yaml", transport="dev")
        spec = parse_sweep({"matrix": {"x": list(range(20))}, "max_parallel": 6})
        sweep = await orchestrator.submit(SweepRequest(run=run, spec=spec, source="mcp"))
        await until(lambda: len(launched) >= 6, "6 cells launched")
        async with stopped("sshd"):
            killed = await sessions_of_this_process(int(dev_profile.port or 22))
            for pid in killed:  # an sshd restart that also ends the sessions it served
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 15)
            await asyncio.sleep(1)
        done = await orchestrator.wait(sweep.id, timeout=180)
        assert killed  # the pool's sessions were really cut
        cells = dev_host.store.call(lambda session: list(session.exec(select(WorkflowRunRecord))))
        errors = [cell.error for cell in cells if cell.error]
        assert (done.status, done.cells_completed, done.cells_failed) == ("completed", 20, 0), errors
        recorded = [record.job_id for record in dev_host.store.call(job_repo.history)]
        assert len(recorded) == len(set(recorded)) == 20
        in_slurm = await eventually(  # accounting learns of the last jobs a moment after they end
            lambda: submitted_in(remote, started),
            until=lambda in_slurm: len(in_slurm) >= len(recorded),
            interval=0.5,
            what="every cell's job in accounting",
        )
        assert sorted(in_slurm) == sorted(recorded)  # Slurm ran each cell's job once
    finally:
        live = [record.job_id for record in dev_host.store.call(job_repo.live_jobs)]
        with contextlib.suppress(Exception):
            if live:
                await dev_host.transport("dev").cancel(live)
            await dev_host.transport("dev").check(["rm", "-rf", "--", remote])  # type: ignore[attr-defined]
        await orchestrator.close()
        await close(engine)


# -- the store's disk -----------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs: the state directory lives on it."""
    if os.geteuid() != 0:
        skip_or_fail("mounting a small filesystem needs root")
    mountpoint = tmp_path / "small"
    mountpoint.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(mountpoint)], check=True)
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def fill(directory: Path) -> Path:
    """Fill the filesystem of ``directory`` to the last byte; returns the file to delete to free it."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for block in (b"\0" * 65536, b"\0"):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, block)
    finally:
        os.close(fd)
    return filler


async def test_a_full_disk_under_the_store_is_a_clear_error_and_corrupts_no_row(
    small_disk: Path, svc_plugin_manager: object, svc_register_plugin: Callable[..., None]
) -> None:
    import svc_plugin_local.hooks
    from svc_host.api.app import create_app
    from svc_host.testing.http import asgi_client, security_for_tests

    svc_register_plugin(svc_plugin_local.hooks, "local", distribution="svc", version="0")
    paths = SvcPaths(
        system_config=small_disk.parent / "etc" / "config.json",
        user_config_dir=small_disk / "config",
        state_dir=small_disk / "state",
        project_dir=Path.cwd(),
    )
    database = paths.state_dir / "svc.db"
    host = Host(
        paths=paths,
        plugins=svc_plugin_manager,  # type: ignore[arg-type]
        profiles=ProfileStore(paths.profiles_file),
        store=Store(f"sqlite:///{database}"),
        source="web",
        read_env=False,
    )
    schedule = {"workflow": "nightly", "every": 3600}
    async with asgi_client(create_app(host, security=security_for_tests())) as http:
        job = {"name": "hello", "command": "echo hello"}
        made = await http.post("/api/workflows/create", json={"name": "nightly", "jobs": [job]})
        assert made.status_code == 200, made.text
        for name in ("one", "two"):
            created = await http.post("/api/schedules", json={"name": name, **schedule})
            assert created.status_code == 201, created.text
        assert (await http.put("/api/config", json={"log_dir": "before"})).status_code == 200
        filler = fill(small_disk)
        try:
            refused = await http.post("/api/schedules", json={"name": "three", **schedule})
            assert refused.status_code == 500
            assert "disk holding svc's store" in refused.json()["detail"]
            assert "is full" in refused.json()["detail"]
            config = await http.put("/api/config", json={"log_dir": "after"})
            assert config.status_code == 500
            assert "could not write the configuration" in config.json()["detail"]
        finally:
            filler.unlink()
        assert json.loads(paths.user_config.read_text()) == {"log_dir": "before"}  # never half-written
        left = sorted(p.name for p in paths.user_config.parent.iterdir())
        assert left == [paths.user_config.name, f"{paths.user_config.name}.lock"]  # the writers' lock, no temp file
        names = [row["name"] for row in (await http.get("/api/schedules")).json()]
        assert names == ["one", "two"]
        assert (await http.post("/api/schedules", json={"name": "three", **schedule})).status_code == 201
    host.store.close()
    with sqlite3.connect(database) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert check.execute("SELECT count(*) FROM schedule").fetchone() == (3,)
