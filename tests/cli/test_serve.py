"""``svc serve`` as a user starts it: a real uvicorn on a loopback port, lifespan included, behind its
Host and token checks; on a terminal it prints a login link that logs a browser in with one click."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from svc_host.domain.profiles import SSHProfile
from svc_host.testing.serve import ServeProcess, free_port, start_serve
from svc_host.testing.waiting import DEADLINE

TOKEN = "serve-test-token-0123456789"


@pytest.fixture
def server() -> Iterator[ServeProcess]:
    server = start_serve(env={"SVC_API_TOKEN": TOKEN})
    try:
        yield server
    finally:
        server.stop()


def test_serve_answers_on_loopback_and_stops_cleanly(server: ServeProcess) -> None:
    base = server.base
    auth = {"Authorization": f"Bearer {TOKEN}"}
    plugins = httpx.get(f"{base}/api/plugins", headers=auth, timeout=5)
    assert plugins.status_code == 200
    assert {"local", "ssh", "rsync"} <= {row["name"] for row in plugins.json()["plugins"]}
    assert httpx.get(f"{base}/docs", timeout=5).status_code == 200
    assert httpx.get(f"{base}/api/history", headers=auth, timeout=5).json() == []
    err = server.stop()
    # uvicorn shuts down gracefully, then re-raises the signal it caught
    assert server.process.returncode in (0, -signal.SIGTERM), err
    assert "Traceback" not in err


def test_serve_refuses_rebinding_and_requests_without_the_token(server: ServeProcess) -> None:
    base = server.base
    auth = {"Authorization": f"Bearer {TOKEN}"}
    rebound = httpx.get(f"{base}/api/config", headers={**auth, "Host": "evil.example"}, timeout=5)
    assert rebound.status_code == 400
    forged = httpx.post(f"{base}/api/jobs", headers={"Host": "evil.example"}, json={"script_content": "x"}, timeout=5)
    assert forged.status_code == 400
    anonymous = httpx.post(f"{base}/api/jobs", json={"script_content": "#!/bin/sh\ntrue\n"}, timeout=5)
    assert anonymous.status_code == 401
    assert httpx.get(f"{base}/api/config", headers=auth, timeout=5).status_code == 200
    env = httpx.get(f"{base}/api/config/env", headers=auth, timeout=5)
    assert TOKEN not in env.text


def read_until(primary: int, pattern: bytes, output: bytes = b"", wait: float = DEADLINE) -> bytes:
    """What the pty shows, read until ``pattern`` appears in it (or ``wait`` seconds pass)."""
    deadline = time.monotonic() + wait
    while not re.search(pattern, output) and time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 1)
        if ready:
            try:
                output += os.read(primary, 4096)
            except OSError:
                break
    return output


def test_the_printed_link_logs_a_browser_in_once_and_the_token_is_never_shown(tmp_path: Path) -> None:
    """On a terminal (a pty, as a person runs it) svc serve prints a login link with a one-time code; the generated
    token stays in its file, out of the link, the browser and the log."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "svc_host", "serve", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
    )
    os.close(secondary)
    try:
        text = read_until(primary, rb"svc serve: open \S+\r?\n.*prints another\)\r?\n").decode()
        match = re.search(rf"svc serve: open ({base}/\?login_code=(\S+))", text)
        assert match, text
        link, code = match.groups()
        token_file = Path(os.environ["XDG_STATE_HOME"]) / "svc" / "api-token"
        token = token_file.read_text().strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert f"svc login-link --url {base}/" in text

        with httpx.Client(timeout=5) as browser, httpx.Client(timeout=5) as another:
            landing = browser.get(link)
            assert landing.status_code == 303
            assert landing.headers["location"] == "/"
            assert token not in landing.headers["set-cookie"]
            assert browser.get(f"{base}/api/plugins").status_code == 200
            assert another.get(link).headers["location"] == "/?login=failed"  # used once already
            fresh = subprocess.run(
                [sys.executable, "-m", "svc_host", "login-link", "--url", f"{base}/"],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            ).stdout.strip()
            assert fresh.startswith(f"{base}/?login_code=")
            assert another.get(fresh).headers["location"] == "/"
            assert another.get(f"{base}/api/plugins").status_code == 200
        log = read_until(primary, rb"GET /\?login_code=<redacted>.*\n.*GET /\?login_code=<redacted>", text.encode())
        log_text = log.decode()
        assert log_text.count("GET /?login_code=<redacted>") >= 2, log_text
        assert log_text.count(code) == 1  # the printed link, nowhere in the access log
        assert token not in log_text
    finally:
        process.terminate()
        process.wait(timeout=DEADLINE)
        os.close(primary)


def test_serve_refuses_no_auth_off_loopback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "svc_host", "serve", "--host", "0.0.0.0", "--no-auth"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: refusing --no-auth on 0.0.0.0: anyone who can reach that address could run jobs as you; "
        "serve on 127.0.0.1 or drop --no-auth (docs/security.md)"
    ]


def test_no_auth_on_loopback_warns() -> None:
    server = start_serve("--no-auth")
    try:
        assert httpx.get(f"{server.base}/api/plugins", timeout=5).status_code == 200
    finally:
        err = server.stop()
    assert "warning: --no-auth" in err


@pytest.mark.cluster
def test_a_running_server_uses_a_profile_the_cli_adds_afterwards(
    server: ServeProcess, dev_profile: SSHProfile, tmp_path: Path
) -> None:
    """``svc profile add/mount add/use`` while ``svc serve`` runs: the files and jobs endpoints use it at once."""
    import shlex
    import uuid

    base = server.base
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(f"{base}/api/files/mounts", headers=auth, timeout=5).json() == []
    local = tmp_path / "project"
    (local / "data").mkdir(parents=True)
    (local / "train.py").write_text("print(1)\n")
    (local / "data" / "big.bin").write_bytes(b"x" * 4096)
    remote = f"svc-serve-test-{uuid.uuid4().hex[:12]}"
    commands = [
        ["profile", "add", "dev", "--hostname", dev_profile.hostname, "--username", dev_profile.username,
         "--key", dev_profile.key_filename, "--port", str(dev_profile.port), "--known-hosts", dev_profile.known_hosts],
        ["profile", "mount", "add", "dev", "proj", str(local), remote, "--exclude", "data/"],
        ["profile", "use", "dev"],
    ]  # fmt: skip
    for command in commands:
        done = subprocess.run([sys.executable, "-m", "svc_host", *command], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr

    ssh = [
        "ssh", "-p", str(dev_profile.port), "-i", dev_profile.key_filename, "-o", "BatchMode=yes",
        "-o", f"UserKnownHostsFile={dev_profile.known_hosts}", f"{dev_profile.username}@{dev_profile.hostname}",
    ]  # fmt: skip
    leftovers = [remote]
    try:
        assert httpx.get(f"{base}/api/files/mounts", headers=auth, timeout=5).json() == [
            {"name": "proj", "remote": remote}
        ]
        synced = httpx.post(f"{base}/api/files/sync", headers=auth, json={"mount": "proj"}, timeout=120)
        assert synced.json() == {"status": "synced", "mount": "proj"}, synced.text
        listed = subprocess.run([*ssh, shlex.join(["ls", "-A", remote])], capture_output=True, text=True, check=True)
        assert sorted(listed.stdout.split()) == [".svc-manifest.json", ".svc-owner", "train.py"]  # no data/
        report = httpx.get(f"{base}/api/files/inspect", headers=auth, params={"mount": "proj"}, timeout=120).json()
        assert report["effective_exclude_patterns"][-1] == "data/"
        assert report["files_would_transfer"] == 0

        job = httpx.post(
            f"{base}/api/jobs", headers=auth, json={"script_content": "#!/bin/bash\nhostname\n"}, timeout=60
        )
        assert job.status_code == 201, job.text
        shown = httpx.get(f"{base}/api/jobs/{job.json()['job_id']}", headers=auth, timeout=30).json()
        assert shown["transport"] == "dev"
        leftovers.extend(path for path in (shown["stdout_path"], shown["stderr_path"]) if path)
    finally:
        subprocess.run([*ssh, shlex.join(["rm", "-rf", "--", *leftovers])], capture_output=True, check=False)
