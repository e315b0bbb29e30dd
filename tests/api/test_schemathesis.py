"""schemathesis over the whole OpenAPI of a real ``svc serve`` on the dev cluster: no undeclared 5xx, and
every error body is ``{detail: string}``; then its stateful phase, which follows the served document's OpenAPI
links (svc_host/api/openapi_links.py) from what a call created to the calls that take it (a job submitted, then
read, its logs, cancelled; a workflow created, run, its run read and cancelled; a session, a profile, a schedule,
a mount).

What runs, and why it is safe on the shared cluster:

* The server is a real ``svc serve`` subprocess with its own HOME/XDG dirs and ``SVC_API_TOKEN``; every
  request sends ``Authorization: Bearer`` (a server without the token check simply ignores the header).
* Its cluster is the dev cluster through an SSH profile ``dev`` for the unprivileged user ``svcdev``
  (``SVC_SSH_PROFILE=dev``, ``SVC_TRANSPORT=dev``): the fuzzer's profile activations cannot move the server to
  another host, and whatever reaches Slurm runs as ``svcdev``, never as the user running the tests.
* ``DELETE /api/jobs/{job_id}`` never names another test's job: the leading digits of a generated id (``123``,
  ``123_4``, ``123_[1-3]``) are moved above Slurm's largest possible job id (67,108,863), so the route is
  exercised down to "not found"; only the stateful phase cancels a job, one it submitted itself.
* ``POST /api/jobs`` scripts start with ``exit 0``: the generated text still goes through validation,
  rendering and sbatch, but runs nothing, and each job ends at once.
* A mount's ``local`` directory is moved under the test's temporary directory: the project-config endpoints
  write ``.svc.json`` into it, and must never write into ``/`` or the real home.
* Random documents never form a valid workflow, so the run endpoints answer 404/422 and submit nothing.
* ``/api/events`` is left out: an event stream never ends, which is its point, not a hang.

Bounded: a fixed seed and ``MAX_EXAMPLES`` generated cases per operation besides schemathesis' own
coverage cases: about 2,250 requests, under 30 s on two cores; the stateful phase runs ``STATEFUL_SCENARIOS``
scenarios of at most ``STATEFUL_STEPS`` calls each.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, seed, settings

from svc_host.domain.profiles import SSHProfile
from svc_host.testing.serve import isolated_env, start_serve

pytestmark = pytest.mark.cluster

TOKEN = "schemathesis-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_EXAMPLES = 8
SLURM_MAX_JOB_ID = 67_108_863
SAFE_SCRIPT = "#!/bin/sh\nexit 0\n"
STATEFUL_SCENARIOS = 25
STATEFUL_STEPS = 6


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, dev_profile: SSHProfile) -> Iterator[tuple[str, Path]]:
    """``svc serve`` on a free loopback port with a fresh home; yields its base URL and its scratch dir."""
    root = tmp_path_factory.mktemp("schemathesis")
    work = root / "work"
    work.mkdir()
    env = isolated_env(root, token=TOKEN) | {"SVC_SSH_PROFILE": "dev", "SVC_TRANSPORT": "dev"}
    profiles = {"current": "dev", "profiles": {"dev": dev_profile.model_dump(mode="json")}}
    (Path(env["XDG_CONFIG_HOME"]) / "svc").mkdir(parents=True)
    (Path(env["XDG_CONFIG_HOME"]) / "svc" / "profiles.json").write_text(json.dumps(profiles))
    with (root / "server.log").open("w") as log:
        try:
            running = start_serve(base_env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        except RuntimeError as exc:
            pytest.fail(f"{exc}: {(root / 'server.log').read_text()}")
        try:
            yield running.base, root
        finally:
            running.stop()


@pytest.fixture
def api_schema(server: tuple[str, Path]) -> Any:
    base, _ = server
    return schemathesis.openapi.from_url(f"{base}/openapi.json", headers=AUTH)


# The event stream never ends (a response that keeps coming is its point); its own tests cover it.
schema = schemathesis.pytest.from_fixture("api_schema").exclude(path="/api/events")


def _out_of_slurm_range(digits: re.Match[str]) -> str:
    return str(SLURM_MAX_JOB_ID + 1 + int(digits[0]) % SLURM_MAX_JOB_ID)


def _made_harmless(case: Any, scratch: Path, own_jobs: frozenset[str] = frozenset()) -> None:
    """The substitutions the module docstring lists (only on values of the expected type); ``own_jobs``, the jobs
    this test submitted, may be cancelled."""
    method, path = case.method.upper(), case.path
    if method == "DELETE" and path == "/api/jobs/{job_id}":
        job_id = (case.path_parameters or {}).get("job_id")
        if isinstance(job_id, int):
            job_id = str(job_id)
        if isinstance(job_id, str) and job_id not in own_jobs:  # 123, 123_4, 123_[1-3]: the array's id moves
            case.path_parameters["job_id"] = re.sub(r"^\d+", _out_of_slurm_range, job_id)
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
    _check_answer(case, case.call(headers=AUTH, timeout=60))


def _check_answer(case: Any, response: Any) -> None:
    """No undeclared 5xx; an error in JSON is ``{detail: string}``."""
    status = response.status_code
    shown = f"{case.method} {case.formatted_path} -> {status}: {response.text[:300]}"
    if status >= 500:
        assert str(status) in _declared(case), f"undeclared server error: {shown}"
    content_type = " ".join(response.headers.get("content-type", []))
    if status >= 400 and content_type.startswith("application/json"):
        body = response.json()
        assert isinstance(body, dict), shown
        assert isinstance(body.get("detail"), str), f"error body is not {{detail: string}}: {shown}"


@pytest.fixture
def stateful_schema(server: tuple[str, Path]) -> Any:
    """The served schema with only its own links (schemathesis' inference would add guesses of its own)."""
    base, _ = server
    loaded = schemathesis.openapi.from_url(f"{base}/openapi.json", headers=AUTH)
    loaded.config.phases.stateful.inference.algorithms = []
    return loaded.exclude(path="/api/events")


def test_stateful_chains_follow_the_links(stateful_schema: Any, server: tuple[str, Path]) -> None:
    _, scratch = server
    submitted: set[str] = set()
    followed: list[str] = []

    class Harmless(stateful_schema.as_state_machine()):  # type: ignore[misc]
        def before_call(self, case: Any) -> None:
            _made_harmless(case, scratch, frozenset(submitted))
            job_id = str((case.path_parameters or {}).get("job_id"))
            if case.path.startswith("/api/jobs/{job_id}") and job_id in submitted:
                followed.append(f"{case.method} {case.path}")

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": AUTH, "timeout": 60}

        def after_call(self, response: Any, case: Any) -> None:
            if case.method.upper() == "POST" and case.path == "/api/jobs" and response.status_code == 201:
                submitted.add(str(response.json()["job_id"]))

        def validate_response(self, response: Any, case: Any, *args: Any, **kwargs: Any) -> None:
            _check_answer(case, response)

    Harmless.run(
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
    )
    assert submitted, "the stateful phase submitted no job"
    assert followed, f"no link from POST /api/jobs was followed to job {sorted(submitted)}"
