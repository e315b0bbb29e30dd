"""The svc agent as a user meets it: ``svc jobs|status|submit|logs -t PROFILE`` print the same things, fail
the same way and exit with the same codes through a running agent and without one (``SVC_AGENT=off``), on
the dev cluster over its loopback sshd. An agent that is stale, stuck or lost never hangs a command or
submits a job twice; it talks only to its own user and keeps no secret in its log."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_host import __version__
from svc_host.agent import launch
from svc_host.agent.place import Place
from svc_host.domain.profiles import SSHProfile
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore
from svc_host.testing.plugin import skip_or_fail
from svc_host.testing.waiting import eventually_blocking

HEAVY = ("asyncssh", "pydantic", "sqlalchemy", "sqlmodel", "svc_host.host")

RUN_AND_REPORT = """
import atexit, json, sys
heavy = json.loads(sys.argv[1])
atexit.register(lambda: sys.stderr.write("LOADED " + json.dumps([m for m in heavy if m in sys.modules]) + "\\n"))
sys.argv = ["svc", *sys.argv[2:]]
from svc_host.cli import main
main()
"""


def svc(*args: str, agent: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
    """``svc ARGS`` in a new process: through the running agent (``SVC_AGENT=manual``: none is started), or
    without one (``agent=False``: ``SVC_AGENT=off``); ``env`` overrides."""
    variables = {**os.environ, "SVC_AGENT": "manual" if agent else "off", **env}
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args],
        env=variables,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def both(*args: str) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    return svc(*args), svc(*args, agent=False)


def outcome(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return done.returncode, done.stdout, done.stderr


def agent_facts() -> dict[str, Any]:
    done = svc("agent", "status", "--json")
    return dict(json.loads(done.stdout))


def ssh_argv(dev_env: dict[str, str]) -> list[str]:
    return [
        "ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-p", dev_env["SVC_DEV_SSH_PORT"],
        "-i", dev_env["SVC_DEV_SSH_KEY"], "-o", f"UserKnownHostsFile={dev_env['SVC_DEV_SSH_KNOWN_HOSTS']}",
        f"{dev_env['SVC_DEV_SSH_USER']}@{dev_env['SVC_DEV_SSH_HOST']}",
    ]  # fmt: skip


def stop_agent(place: Place) -> None:
    svc("agent", "stop")
    if not launch.wait_stopped(place, timeout=10):
        os.kill(int(place.lock.read_text().strip()), signal.SIGKILL)
        assert launch.wait_stopped(place, timeout=10)


@pytest.fixture
def work_dir(dev_env: dict[str, str]) -> Iterator[str]:
    """A fresh cluster directory for the test's jobs; its jobs are cancelled and it is removed afterwards."""
    name = f"svc-agent-{uuid.uuid4().hex[:10]}"
    yield name
    rows = json.loads(svc("history", "--json", "--limit", "1000", agent=False).stdout or "[]")
    ssh = ssh_argv(dev_env)
    ids = [row["job_id"] for row in rows]
    if ids:
        subprocess.run([*ssh, shlex.join(["scancel", *ids])], capture_output=True, timeout=120, check=False)
    subprocess.run([*ssh, shlex.join(["rm", "-rf", "--", name])], capture_output=True, timeout=120, check=False)


@pytest.fixture
def dev(dev_profile: SSHProfile) -> str:
    """The dev cluster as SSH profile ``dev`` of the test's user."""
    ProfileStore(SvcPaths.from_env().profiles_file).create("dev", dev_profile)
    return "dev"


@pytest.fixture
def agent(dev: str) -> Iterator[Place]:
    """A running agent (``svc agent start``) for the test's setup, stopped afterwards."""
    place = Place.from_env()
    started = svc("agent", "start", "--connect", dev)
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith("svc agent running (pid ")
    try:
        yield place
    finally:
        stop_agent(place)


def wait_for_state(job_id: str, *states: str) -> dict[str, Any]:
    return eventually_blocking(
        lambda: dict(json.loads(svc("status", "-t", "dev", job_id, "--json").stdout)[0]),
        until=lambda found: found["state"] in states,
        timeout=120,
        interval=0.5,
        what=f"job {job_id} reaching {states}",
    )


@pytest.mark.cluster
def test_commands_print_the_same_through_the_agent_and_without(agent: Place, work_dir: str) -> None:
    secret = f"s3cret-{uuid.uuid4().hex}"
    made = svc(
        "submit", "-t", "dev", "-p", "debug", "--work-dir", work_dir, "--name", "agent job", "--env", f"TOKEN={secret}",
        "--json", "--", "echo", "hello from the agent",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    job = json.loads(made.stdout)
    assert job["stdout"] == f"{work_dir}/logs/agent_job-{job['job_id']}.out"
    assert agent_facts()["requests"] == 1  # the agent submitted it
    assert wait_for_state(job["job_id"], "COMPLETED", "FAILED")["state"] == "COMPLETED"
    # recorded in the store every svc process reads, by the CLI
    history = json.loads(svc("history", "--json", agent=False).stdout)
    assert [(row["job_id"], row["source"], row["name"]) for row in history] == [(job["job_id"], "cli", "agent job")]

    served_before = agent_facts()["requests"]
    cases = [
        (("status", "-t", "dev", job["job_id"]), 0),
        (("status", "-t", "dev", job["job_id"], "--json"), 0),
        (("status", "-t", "dev", job["job_id"], "999999999"), 1),
        (("logs", "-t", "dev", job["job_id"]), 0),
        (("logs", "-t", "dev", "-f", job["job_id"]), 0),
        (("logs", "-t", "dev", "--stderr", job["job_id"]), 0),
        (("jobs", "-t", "dev", "-u", "nobody"), 0),
        (("jobs", "-t", "dev", "-u", "nobody", "--json"), 0),
        (("submit", "-t", "dev", "--time", "soon", "true"), 2),
        (("submit", "-t", "dev", "-m", "nomount", "true"), 1),
        (("jobs", "-t", "nope"), 1),
        (("submit", "-t", "nope", "--time", "soon", "true"), 2),  # bad input is reported before the transport
    ]
    for args, code in cases:
        through, without = both(*args)
        assert outcome(through) == outcome(without), args
        assert through.returncode == code, (args, through.stderr)
        assert "Traceback" not in through.stderr
    assert agent_facts()["requests"] == served_before + len(cases)
    assert svc("logs", "-t", "dev", job["job_id"]).stdout == "hello from the agent\n"
    assert svc("jobs", "-t", "nope").stderr.startswith("error: unknown transport 'nope'; choose one of: dev (from ssh")
    assert secret not in agent.log_file.read_text()  # the log names calls, never their arguments
    assert agent.log_file.stat().st_mode & 0o777 == 0o600


@pytest.mark.cluster
def test_through_the_agent_a_command_imports_neither_ssh_nor_pydantic_nor_the_orm(agent: Place) -> None:
    default = {key: value for key, value in os.environ.items() if key != "SVC_AGENT"}  # as a user runs it
    for args in (("jobs", "-t", "dev", "-u", "nobody", "--json"), ("status", "-t", "dev", "999999999")):
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_REPORT, json.dumps(HEAVY), *args],
            env=default,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        reports = [line for line in done.stderr.splitlines() if line.startswith("LOADED ")]
        assert reports, done.stderr
        assert json.loads(reports[-1].removeprefix("LOADED ")) == [], args
    assert agent_facts()["requests"] == 2


@pytest.mark.cluster
def test_the_agent_sees_profile_changes(agent: Place, dev_profile: SSHProfile) -> None:
    profiles = ProfileStore(SvcPaths.from_env().profiles_file)
    profiles.create("again", dev_profile)
    listed = svc("jobs", "-t", "again", "-u", "nobody", "--json")
    assert (listed.returncode, listed.stdout.strip()) == (0, "[]"), listed.stderr
    assert "again" in agent_facts()["transports"]
    profiles.delete("again")
    through, without = both("jobs", "-t", "again")
    assert outcome(through) == outcome(without)
    assert through.stderr.startswith("error: unknown transport 'again'")
    # a profiles file that is not valid is reported as without an agent (which would go on with the old one)
    profiles.path.write_text("{not json")
    through, without = both("jobs", "-t", "dev")
    assert outcome(through) == outcome(without)
    assert through.returncode == 1
    assert through.stderr.startswith("error: ")


@pytest.mark.cluster
def test_a_stale_socket_is_removed_and_the_command_runs_itself(agent: Place) -> None:
    os.kill(int(agent.lock.read_text().strip()), signal.SIGKILL)
    assert launch.wait_stopped(agent)
    assert agent.socket.exists()  # a killed agent leaves its socket behind
    listed = svc("jobs", "-t", "dev", "-u", "nobody", "--json")
    assert (listed.returncode, listed.stdout.strip()) == (0, "[]"), listed.stderr
    assert not agent.socket.exists()
    assert not agent.lock.exists()


class FakeAgent:
    """A socket at the agent's place that reads one request and then does what ``behave`` says."""

    def __init__(self, place: Place, behave: str) -> None:
        place.secure_dir(create=True)
        self.received = b""
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(place.socket))
        self.listener.listen(1)
        self.place, self.behave = place, behave
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn, conn.makefile("rb") as reader:
            self.received += reader.readline()
            if self.behave == "ready-then-vanish":
                conn.sendall(b'{"ready":true}\n')
                self.received += reader.readline()
                return  # lost after go, as a killed agent would be
            self.received += reader.read()  # stuck: never answers; returns when the CLI gives up and closes

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=30)
        self.place.socket.unlink(missing_ok=True)


@pytest.mark.cluster
def test_a_stuck_agent_never_hangs_a_command_nor_submits_twice(dev: str, work_dir: str) -> None:
    fake = FakeAgent(Place.from_env(), "stuck")
    try:
        made = svc("submit", "-t", dev, "-p", "debug", "--work-dir", work_dir, "--", "true")
    finally:
        fake.close()
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip().isdigit()
    request = json.loads(fake.received.splitlines()[0])
    assert request["call"] == "submit"
    assert len(fake.received.splitlines()) == 1  # never told to go: the CLI submitted it itself
    history = json.loads(svc("history", "--json", agent=False).stdout)
    assert [row["job_id"] for row in history] == [made.stdout.strip()]


def test_an_agent_lost_during_a_submit_is_an_unknown_outcome_never_a_second_submit() -> None:
    fake = FakeAgent(Place.from_env(), "ready-then-vanish")
    try:
        made = svc("submit", "-t", "hpc", "-p", "debug", "--", "true")
    finally:
        fake.close()
    assert made.returncode == 1
    assert made.stderr.startswith("error: the svc agent failed during `svc submit`")
    assert "whether it took effect is unknown: look with `svc jobs` before you try again" in made.stderr
    assert len(made.stderr.strip().splitlines()) == 1
    assert json.loads(fake.received.splitlines()[1]) == {"go": True}
    assert json.loads(svc("history", "--json", agent=False).stdout) == []


def test_an_agent_lost_during_a_session_start_is_an_unknown_outcome_never_a_second_start() -> None:
    fake = FakeAgent(Place.from_env(), "ready-then-vanish")
    try:
        made = svc("session", "start", "command", "--field", "command=true", "--transport", "hpc")
    finally:
        fake.close()
    assert made.returncode == 1
    assert made.stderr.startswith("error: the svc agent failed during `svc session start`")
    assert "whether it took effect is unknown: look with `svc session list` before you try again" in made.stderr
    assert len(made.stderr.strip().splitlines()) == 1
    assert json.loads(fake.received.splitlines()[1]) == {"go": True}
    assert json.loads(svc("session", "list", "--json", agent=False).stdout) == []


def raw_request(place: Place, body: dict[str, Any]) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(place.socket))
        sock.sendall(json.dumps(body).encode() + b"\n")
        with sock.makefile("rb") as reader:
            return dict(json.loads(reader.readline()))


@pytest.mark.cluster
def test_the_agent_answers_bad_or_foreign_requests_with_one_clear_reply(agent: Place) -> None:
    mode = {path.name: path.stat().st_mode & 0o777 for path in (agent.directory, agent.socket)}
    assert mode == {agent.directory.name: 0o700, agent.socket.name: 0o600}
    request = {"svc": __version__, "fingerprint": agent.fingerprint, "args": {}, "cwd": "/"}
    assert raw_request(agent, {**request, "call": "frobnicate"}) == {
        "error": {
            "kind": "request",
            "message": "unknown call 'frobnicate'; choose one of: queue, status, submit, log_step, session_start, "
            "session_open, ping, stop",
        }
    }
    assert raw_request(agent, {**request, "call": "ping", "fingerprint": "0" * 64}) == {
        "declined": "this agent serves another setup (config, state or SVC_* variables differ)"
    }
    assert agent_facts()["running"]
    # a CLI of another svc version stops it: it is out of date
    assert raw_request(agent, {**request, "call": "ping", "svc": "0.0.1"}) == {
        "declined": f"this agent runs svc {__version__}, not 0.0.1"
    }
    assert launch.wait_stopped(agent)
    assert not agent.socket.exists()


@pytest.fixture
def runtime_dir_others_may_enter(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An ``XDG_RUNTIME_DIR`` of the test's own that another user may pass through (0711), so that opening the
    agent's directory for a moment opens no other test's agent."""
    if os.getuid() != 0:
        skip_or_fail("connecting as another user needs root (make test runs as root)")
    runtime = Path(tempfile.mkdtemp(prefix="svc-peer-"))
    runtime.chmod(0o711)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    yield runtime
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.mark.cluster
@pytest.mark.usefixtures("runtime_dir_others_may_enter")  # before ``agent``: it starts the agent there
def test_a_connection_from_another_user_is_refused(agent: Place, dev_env: dict[str, str]) -> None:
    other = dev_env["SVC_DEV_SSH_USER"]
    probe = "\n".join(
        [
            "import socket, sys",
            "s = socket.socket(socket.AF_UNIX)",
            "s.settimeout(20)",
            "s.connect(sys.argv[1])",
            "try:",
            "    s.sendall(sys.argv[2].encode() + b'\\n')",
            "    got = s.recv(4096)",
            "except OSError:",  # closed before the request was even sent
            "    got = b''",
            "print(repr(got))",
        ]
    )
    ping = {"svc": __version__, "fingerprint": agent.fingerprint, "call": "ping", "args": {}, "cwd": "/"}
    agent.directory.chmod(0o711)  # open the two doors the modes keep shut, to reach the uid check behind them
    agent.socket.chmod(0o666)
    try:
        done = subprocess.run(
            ["runuser", "-u", other, "--", "/usr/bin/python3", "-c", probe, str(agent.socket), json.dumps(ping)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        agent.directory.chmod(0o700)
        agent.socket.chmod(0o600)
    assert (done.returncode, done.stdout.strip()) == (0, "b''"), done.stderr  # closed without a word
    uid = int(subprocess.run(["id", "-u", other], capture_output=True, text=True, check=True).stdout)
    assert f"refused a connection from uid {uid}" in agent.log_file.read_text()


@pytest.mark.cluster
def test_local_commands_never_go_through_the_agent(agent: Place, slurm_cluster: None) -> None:
    assert svc("jobs", "-u", "nobody", "--json").stdout.strip() == "[]"
    assert agent_facts()["requests"] == 0


@pytest.mark.cluster
@pytest.mark.parametrize("mode", ["", "auto"])
def test_by_default_an_ssh_command_starts_an_agent_for_the_next_one(dev: str, mode: str) -> None:
    """Unset (here empty) or ``auto``: the first command runs by itself and leaves an agent for the next."""
    place = Place.from_env()
    try:
        listed = svc("jobs", "-t", dev, "-u", "nobody", "--json", SVC_AGENT=mode)
        assert (listed.returncode, listed.stdout.strip()) == (0, "[]"), listed.stderr
        eventually_blocking(lambda: launch.ping(place), interval=0.1, what="the agent the first command left")
        assert svc("jobs", "-t", dev, "-u", "nobody", "--json").stdout.strip() == "[]"
        assert agent_facts()["requests"] == 1
    finally:
        stop_agent(place)


@pytest.mark.cluster
def test_manual_and_off_never_start_an_agent(dev: str) -> None:
    place = Place.from_env()
    for mode in ("manual", "off", "OFF"):
        listed = svc("jobs", "-t", dev, "-u", "nobody", "--json", SVC_AGENT=mode)
        assert (listed.returncode, listed.stdout.strip()) == (0, "[]"), listed.stderr
    time.sleep(2)  # what an auto start would have had to begin listening
    assert launch.ping(place) is None
    assert not place.lock.exists()


def test_an_unknown_svc_agent_value_is_one_line_and_nothing_runs() -> None:
    done = svc("jobs", "-t", "nowhere", SVC_AGENT="sometimes")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "error: SVC_AGENT='sometimes': expected one of auto, manual, off\n"
    assert launch.ping(Place.from_env()) is None


def test_an_idle_agent_exits_by_itself() -> None:
    place = Place.from_env()
    started = svc("agent", "start", "--idle-minutes", "0.02")
    assert started.returncode == 0, started.stderr
    assert "until 0.02 min pass without a command" in started.stdout
    assert launch.wait_stopped(place, timeout=120)
    assert "stopping: idle for" in place.log_file.read_text()
    assert not place.socket.exists()
    assert not place.lock.exists()  # nothing left behind in the shared directory


def test_status_and_stop_without_an_agent() -> None:
    status = svc("agent", "status")
    assert (status.returncode, status.stdout) == (1, "no svc agent is running (svc agent start starts one)\n")
    assert json.loads(svc("agent", "status", "--json").stdout) == {"running": False}
    stop = svc("agent", "stop")
    assert (stop.returncode, stop.stdout) == (0, "no svc agent is running\n")


def test_starting_a_running_agent_changes_nothing() -> None:
    place = Place.from_env()
    try:
        first = svc("agent", "start", "--idle-minutes", "5")
        assert first.returncode == 0, first.stderr
        facts = agent_facts()
        pid = facts["pid"]
        assert facts["running"] is True
        assert facts["started_at"].endswith("+00:00")  # ISO 8601 in UTC
        assert (facts["idle_minutes"], facts["requests"], facts["transports"]) == (5, 0, [])
        assert svc("agent", "status").stdout.startswith(f"svc agent {__version__} running (pid {pid}) since ")
        again = svc("agent", "start")
        assert (again.returncode, again.stdout) == (
            0,
            f"the svc agent is already running (pid {pid}) on {place.socket}\n",
        )
    finally:
        stop_agent(place)


def test_an_agent_that_cannot_start_says_why_in_one_line() -> None:
    started = svc("agent", "start", SVC_DATABASE_URL="not a url")
    assert started.returncode == 1
    assert started.stderr.startswith("Error: the svc agent did not start; see ")
    assert "the svc agent stopped: SVC_DATABASE_URL is not a database URL" in started.stderr
    assert len(started.stderr.strip().splitlines()) == 1


@pytest.mark.cluster
def test_a_submit_through_the_agent_uses_the_job_defaults_of_the_directory_it_ran_in(agent: Place) -> None:
    Path(".svc.json").write_text(json.dumps({"rendering": {"renderer": "nosuchrenderer"}}))
    assert svc("config", "trust", agent=False).returncode == 0  # a project file counts only once trusted
    through, without = both("submit", "-t", "dev", "-p", "debug", "true")
    assert outcome(through) == outcome(without)
    assert through.returncode == 1
    assert "nosuchrenderer" in through.stderr
    assert agent_facts()["requests"] == 1  # the agent rendered with this directory's .svc.json, not its own
