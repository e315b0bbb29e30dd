"""Shared fixtures: the dev cluster's facts (``scripts/devcluster env``) and profiles pointing at it, and a fresh
database for each store test on both SQLite and the dev PostgreSQL (``scripts/devpostgres``).

``SVC_TEST_SLURM`` picks the dev cluster the SSH-based tests run against: ``22.05`` (the default, ``svcdev`` on this
machine) or ``24.11`` (``lab24``, ``scripts/devcluster up24``; docs/clusters.md). In the 24.11 pass the tests that
need this machine's own Slurm CLI (marked ``local_slurm``, see ``pytest_collection_modifyitems``) are deselected:
they run in the 22.05 pass."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, make_url, text

from svc_host.domain.profiles import SSHProfile
from svc_host.testing.fake import FakeTransport, transport_plugin
from svc_host.testing.plugin import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent

SLURM_UNDER_TEST = os.environ.get("SVC_TEST_SLURM", "22.05")
"""Read once at import: every test runs without SVC_* variables (the ``home`` fixture)."""
DEV_CLUSTERS = {"22.05": ("status", "env", "SVC_DEV_"), "24.11": ("status24", "env24", "SVC_DEV24_")}
"""Slurm version -> ``scripts/devcluster`` status and env commands and the prefix of the facts env prints."""
LOCAL_SLURM_FIXTURES = {"slurm_cluster", "sbatch_job"}
"""Fixtures that run this machine's own Slurm CLI: a test using any of them (even indirectly) is ``local_slurm``."""


def pytest_configure(config: pytest.Config) -> None:
    if SLURM_UNDER_TEST not in DEV_CLUSTERS:
        raise pytest.UsageError(f"SVC_TEST_SLURM={SLURM_UNDER_TEST!r}: expected one of {', '.join(DEV_CLUSTERS)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``local_slurm`` every test whose fixtures run this machine's Slurm CLI; in the 24.11 pass, deselect
    them (this machine's Slurm is 22.05, and the 22.05 pass runs them)."""
    for item in items:
        if LOCAL_SLURM_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.local_slurm)
    if SLURM_UNDER_TEST == "22.05":
        return
    local = [item for item in items if item.get_closest_marker("local_slurm")]
    if local:
        config.hook.pytest_deselected(items=local)
        items[:] = [item for item in items if not item.get_closest_marker("local_slurm")]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs with its own HOME, XDG dirs and system config file, in ``tmp_path / "work"``,
    with no SVC_* variables but ``SVC_AGENT=off``: nothing of the real user's svc setup is read or written, and
    no command leaves an agent behind (tests/cli/test_agent.py asks for one)."""
    for key in [key for key in os.environ if key.startswith("SVC_") or key == "CHAT_WEBHOOK_URL"]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("SVC_AGENT", "off")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("SVC_SYSTEM_CONFIG", str(tmp_path / "etc" / "config.json"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return home


class LoopClock:
    """The running event loop's clock, moved on by hand: what svc times with ``loop.time()`` (snapshot ages, the
    monitor's lost-job clock) sees ``advance(seconds)`` at once, however busy the machine is. Timers due by then
    fire at the next turn of the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._real = loop.time
        self.offset = 0.0

    def time(self) -> float:
        return self._real() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@pytest.fixture
async def loop_clock() -> AsyncIterator[LoopClock]:
    """Drive the test's event loop clock explicitly (``loop_clock.advance(600)``) instead of sleeping."""
    loop = asyncio.get_running_loop()
    clock = LoopClock(loop)
    loop.time = clock.time  # type: ignore[method-assign]
    yield clock
    del loop.time


@pytest.fixture(scope="session")
def dev_env() -> dict[str, str]:
    """``KEY=value`` facts printed by ``scripts/devcluster env`` (ssh port, user, key, partitions, GPUs...) of the
    cluster under test, under the same ``SVC_DEV_*`` keys for both (``env24``'s ``SVC_DEV24_*`` renamed), plus
    ``SVC_DEV_SLURM`` (the version), ``SVC_DEV_ROOT`` (where the cluster's files are on this machine: ``/`` or the
    chroot) and ``SVC_DEV_GPU_TYPES`` (``a100:2,v100:2``, or empty for untyped GPUs)."""
    status_command, env_command, prefix = DEV_CLUSTERS[SLURM_UNDER_TEST]
    script = ROOT / "scripts" / "devcluster"
    status = subprocess.run([script, status_command], capture_output=True, text=True, check=False)
    if status.returncode != 0:
        up = "up" if status_command == "status" else "up24"
        skip_or_fail(f"the dev cluster is not up (scripts/devcluster {up}):\n{status.stdout}{status.stderr}")
    out = subprocess.run([script, env_command], capture_output=True, text=True, check=True).stdout
    facts = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    env = {"SVC_DEV_" + key.removeprefix(prefix): value for key, value in facts.items() if key.startswith(prefix)}
    return {"SVC_DEV_SLURM": SLURM_UNDER_TEST, "SVC_DEV_ROOT": "/", "SVC_DEV_GPU_TYPES": "", **env}


@pytest.fixture(scope="session")
def cluster_path(dev_env: dict[str, str]) -> Callable[[str], Path]:
    """Where an absolute path of the dev cluster's machine is on this one: itself for svcdev, inside the chroot for
    lab24 (a file a job or an SSH command wrote to ``/tmp``, a wrapper put on the cluster's ``PATH``)."""
    root = Path(dev_env["SVC_DEV_ROOT"])

    def on_this_machine(path: str) -> Path:
        if not path.startswith("/"):
            raise ValueError(f"not an absolute path: {path!r}")
        return root / path.lstrip("/")

    return on_this_machine


@pytest.fixture(scope="session")
def dev_profile(dev_env: dict[str, str]) -> SSHProfile:
    """An SSH profile for the dev cluster's non-root user on the loopback sshd."""
    return SSHProfile(
        hostname=dev_env["SVC_DEV_SSH_HOST"],
        port=int(dev_env["SVC_DEV_SSH_PORT"]),
        username=dev_env["SVC_DEV_SSH_USER"],
        key_filename=dev_env["SVC_DEV_SSH_KEY"],
        known_hosts=dev_env["SVC_DEV_SSH_KNOWN_HOSTS"],
        description="dev cluster over loopback ssh",
    )


@pytest.fixture(scope="session")
def nosftp_env(dev_env: dict[str, str]) -> dict[str, str]:
    """``KEY=value`` facts of the second dev sshd (``scripts/devsshd``: 127.0.0.1:2223, no sftp, stock limits)."""
    script = ROOT / "scripts" / "devsshd"
    status = subprocess.run([script, "status"], capture_output=True, text=True, check=False)
    if status.returncode != 0:
        skip_or_fail(f"the sshd without sftp is not up (scripts/devsshd up):\n{status.stdout}{status.stderr}")
    out = subprocess.run([script, "env"], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


@pytest.fixture(scope="session")
def nosftp_profile(nosftp_env: dict[str, str]) -> SSHProfile:
    """An SSH profile for the dev cluster's user on the sshd that refuses the sftp subsystem."""
    return SSHProfile(
        hostname=nosftp_env["SVC_DEV_NOSFTP_HOST"],
        port=int(nosftp_env["SVC_DEV_NOSFTP_PORT"]),
        username=nosftp_env["SVC_DEV_NOSFTP_USER"],
        key_filename=nosftp_env["SVC_DEV_NOSFTP_KEY"],
        known_hosts=nosftp_env["SVC_DEV_NOSFTP_KNOWN_HOSTS"],
        description="dev cluster over loopback ssh, no sftp",
    )


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of the dev PostgreSQL server's test database (``scripts/devpostgres env``), or skip (fail in CI)."""
    script = ROOT / "scripts" / "devpostgres"
    status = subprocess.run([script, "status"], capture_output=True, text=True, check=False)
    if status.returncode != 0:
        skip_or_fail(f"the dev PostgreSQL is not up (scripts/devpostgres up):\n{status.stdout}{status.stderr}")
    env = subprocess.run([script, "env"], capture_output=True, text=True, check=False)
    if env.returncode != 0:  # its password file is root's
        skip_or_fail(f"cannot read the dev PostgreSQL's URL (scripts/devpostgres env): {env.stderr.strip()}")
    return dict(line.split("=", 1) for line in env.stdout.splitlines() if "=" in line)["SVC_DEV_POSTGRES_URL"]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database for one test (the test runs once on each): a SQLite file in ``tmp_path``, or a
    schema of its own in the dev PostgreSQL database (its URL names it), dropped afterwards with whatever
    connections the test left open. Tests of a store, the workflow engine, sweeps, schedules and leases use it."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'svc.db'}"
        return
    base: str = request.getfixturevalue("postgres_url")
    schema = f"t_{uuid.uuid4().hex}"
    admin = create_engine(make_url(base).set(drivername="postgresql+psycopg"))
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    # application_name marks the test's connections, so the teardown can end those it left open
    yield f"{base}?application_name={schema}&options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(
            text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :name"),
            {"name": schema},
        )
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture
def sbatch_job() -> Iterator[Callable[..., str]]:
    """``sbatch_job(*args)`` submits ``sbatch --parsable -o /dev/null ARGS`` by hand (not through svc) and returns
    its job id; every such job is cancelled when the test ends."""
    submitted: list[str] = []

    def submit(*args: str) -> str:
        done = subprocess.run(
            ["sbatch", "--parsable", "-o", "/dev/null", *args], capture_output=True, text=True, timeout=60, check=True
        )
        submitted.append(done.stdout.strip().split(";")[0])
        return submitted[-1]

    yield submit
    if submitted:
        subprocess.run(["scancel", *submitted], timeout=60, check=False)


@pytest.fixture
def fake(svc_register_plugin: Callable[..., None]) -> FakeTransport:
    """A ``FakeTransport`` called ``fake``, registered as a transport plugin of the test's host (a test module may
    define its own ``fake`` instead)."""
    transport = FakeTransport("fake")
    svc_register_plugin(transport_plugin(transport))
    return transport
