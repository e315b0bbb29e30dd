"""schemathesis over the whole OpenAPI of a real ``svc serve`` on the dev cluster: no undeclared 5xx, and
every error body is ``{detail: string}``.

What runs, and why it is safe on the shared cluster:

* The server is a real ``svc serve`` subprocess with its own HOME/XDG dirs and ``SVC_API_TOKEN``; every
  request sends ``Authorization: Bearer`` (a server without the token check simply ignores the header).
* Its cluster is the dev cluster through an SSH profile ``dev`` for the unprivileged user ``svcdev``
  (``SVC_SSH_PROFILE=dev``, ``SVC_TRANSPORT=dev``): the fuzzer's profile activations cannot move the server to
  another host, and whatever reaches Slurm runs as ``svcdev``, never as the user running the tests.
* ``DELETE /api/jobs/{job_id}`` never names another test's job: a generated id in Slurm's range is moved
  above Slurm's largest possible job id (67,108,863), so the route is exercised down to "not found".
* ``POST /api/jobs`` scripts start with ``exit 0``: the generated text still goes through validation,
  rendering and sbatch, but runs nothing, and each job ends at once.
* A mount's ``local`` directory is moved under the test's temporary directory: the project-config endpoints
  write ``.svc.json`` into it, and must never write into ``/`` or the real home.
* Random documents never form a valid workflow, so the run endpoints answer 404/422 and submit nothing.
* ``/api/events`` is left out: an event stream never ends, which is its point, not a hang.

Bounded: a fixed seed and ``MAX_EXAMPLES`` generated cases per operation besides schemathesis' own
coverage cases: about 2,250 requests, under 30 s on two cores.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, seed, settings

from svc_host.domain.profiles import SSHProfile

pytestmark = pytest.mark.cluster

TOKEN = "schemathesis-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_EXAMPLES = 8
SLURM_MAX_JOB_ID = 67_108_863
SAFE_SCRIPT = "#!/bin/sh\nexit 0\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, dev_profile: SSHProfile) -> Iterator[tuple[str, Path]]:
    """``svc serve`` on a free loopback port with a fresh home; yields its base URL and its scratch dir."""
    root = tmp_path_factory.mktemp("schemathesis")
    home, work = root / "home", root / "work"
    (home / ".config" / "svc").mkdir(parents=True)
    work.mkdir()
    profiles = {"current": "dev", "profiles": {"dev": dev_profile.model_dump(mode="json")}}
    (home / ".config" / "svc" / "profiles.json").write_text(json.dumps(profiles))
    env = {key: value for key, value in os.environ.items() if not key.startswith("SVC_")}
    env |= {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "SVC_SYSTEM_CONFIG": str(root / "etc" / "config.json"),
        "SVC_API_TOKEN": TOKEN,
        "SVC_SSH_PROFILE": "dev",
        "SVC_TRANSPORT": "dev",
    }
    port = _free_port()
    log = (root / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "svc_host", "serve", "--port", str(port), "--log-level", "warning"],
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                httpx.get(f"{base}/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None:
                    break
                time.sleep(0.1)
        else:
            pytest.fail("svc serve did not answer")
        assert process.poll() is None, (root / "server.log").read_text()
        yield base, root
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.fixture
def api_schema(server: tuple[str, Path]) -> Any:
    base, _ = server
    return schemathesis.openapi.from_url(f"{base}/openapi.json", headers=AUTH)


# The event stream never ends (a response that keeps coming is its point); its own tests cover it.
schema = schemathesis.pytest.from_fixture("api_schema").exclude(path="/api/events")


def _made_harmless(case: Any, scratch: Path) -> None:
    """The substitutions the module docstring lists (only on values of the expected type)."""
    method, path = case.method.upper(), case.path
    if method == "DELETE" and path == "/api/jobs/{job_id}":
        job_id = (case.path_parameters or {}).get("job_id")
        if isinstance(job_id, int) and 0 < job_id <= SLURM_MAX_JOB_ID:
            case.path_parameters["job_id"] = SLURM_MAX_JOB_ID + job_id
    body = case.body if isinstance(case.body, dict) else None
    if body is None:
        return
    if method == "POST" and path == "/api/jobs" and isinstance(body.get("script_content"), str):
        body["script_content"] = SAFE_SCRIPT + body["script_content"]
    if path.endswith("/mounts") and isinstance(body.get("local"), str):
        digest = hashlib.sha256(body["local"].encode(errors="surrogatepass")).hexdigest()[:12]
        body["local"] = str(scratch / "mounts" / digest)


def _declared(case: Any) -> set[str]:
    return {str(status) for status in case.operation.definition.raw.get("responses", {})}


@schema.parametrize()
@seed(20261123)
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_undeclared_server_error(case: Any, server: tuple[str, Path]) -> None:
    _, scratch = server
    _made_harmless(case, scratch)
    response = case.call(headers=AUTH, timeout=60)
    status = response.status_code
    shown = f"{case.method} {case.formatted_path} -> {status}: {response.text[:300]}"
    if status >= 500:
        assert str(status) in _declared(case), f"undeclared server error: {shown}"
    content_type = " ".join(response.headers.get("content-type", []))
    if status >= 400 and content_type.startswith("application/json"):
        body = response.json()
        assert isinstance(body, dict), shown
        assert isinstance(body.get("detail"), str), f"error body is not {{detail: string}}: {shown}"
