"""Bad input everywhere it enters REST: bounded integers, control characters, YAML bombs, template blow-ups,
huge sweeps. Every answer is a 4xx ``{detail}`` (or the validate endpoint's ``{valid: false, errors}``),
never a 500, and nothing is written. The MCP side is in tests/mcp/test_mcp_bad_input.py."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from svc_host.api.routes import workflows as workflow_routes
from svc_host.host import Host
from svc_host.settings.paths import SvcPaths
from svc_host.testing.waiting import DEADLINE, eventually
from svc_host.workflows.load import check_document

BIG = 2**70
"""Past SQLite's 64-bit integers (the overflow that used to be a 500)."""
LAUGHS = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(7)
)
"""Ten aliases deep, ten per level: 10**8 nodes once expanded."""
DEEP = "x: " + "[" * 5000 + "]" * 5000 + "\n"
RECURSIVE = "name: r\njobs: &a [*a]\n"


def chain(count: int) -> str:
    lines = ["name: chain", "jobs:"]
    for index in range(count):
        lines.append(f"  - name: j{index}\n    command: echo {index}")
        if index:
            lines.append(f"    depends_on: [j{index - 1}]")
    return "\n".join(lines) + "\n"


@pytest.fixture
async def client(svc_api_client: httpx.AsyncClient, svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    yield svc_api_client
    await svc_test_host.close_services()


@pytest.fixture
def workflows(svc_paths: SvcPaths) -> Path:
    return svc_paths.state_dir / "workflows"


def detail(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["detail"], str)
    return str(body["detail"])


# -- integers -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        f"/api/workflows/runs?sweep_id={BIG}",
        f"/api/workflows/runs?offset={BIG}",
        "/api/workflows/runs?sweep_id=-1",
        f"/api/history?offset={BIG}",
        f"/api/jobs/1/logs?stderr_offset={BIG}",
        f"/api/jobs/1/logs?stdout_offset={BIG}",
    ],
)
async def test_integers_past_their_bounds_are_422(client: httpx.AsyncClient, url: str) -> None:
    message = detail(await client.get(url), 422)
    assert "less than or equal" in message or "greater than or equal" in message


@pytest.mark.parametrize("url", [f"/api/jobs/{2**32}", f"/api/jobs/{BIG}/logs", f"/api/jobs/1_{BIG}/pending"])
async def test_job_ids_past_their_bounds_are_400(client: httpx.AsyncClient, url: str) -> None:
    assert "(ids up to 4294967295)" in detail(await client.get(url), 400)


async def test_bounds_are_in_the_openapi(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    params = {p["name"]: p["schema"] for p in paths["/api/workflows/runs"]["get"]["parameters"]}
    assert params["sweep_id"]["anyOf"][0]["maximum"] == 2**53 - 1
    logs = {p["name"]: p["schema"] for p in paths["/api/jobs/{job_id}/logs"]["get"]["parameters"]}
    assert logs["stderr_offset"]["maximum"] == 2**53 - 1
    assert logs["job_id"]["maxLength"] == 64
    for path, method, status in [
        ("/api/files/sync", "post", "503"),
        ("/api/files/mounts", "post", "503"),
        ("/api/files/read", "get", "413"),
        ("/api/workflows/upload", "post", "413"),
        ("/api/workflows/{name}/run", "post", "502"),
        ("/api/jobs", "post", "502"),
    ]:
        declared = paths[path][method]["responses"]
        assert status in declared, (path, method)
        assert declared[status]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")


async def test_job_ids_negative_400_zero_404_huge_sweep_404(client: httpx.AsyncClient) -> None:
    assert "non-negative" in detail(await client.get("/api/jobs/-5"), 400)
    assert "not found" in detail(await client.delete("/api/jobs/0"), 404)
    assert "not found" in detail(await client.get(f"/api/sweep_runs/{10**30}"), 404)
    assert "not found" in detail(await client.post(f"/api/sweep_runs/{10**30}/cancel"), 404)


# -- job fields -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"script_content": "#!/bin/bash\necho hi\n", "name": "two\nlines"},
        {"script_content": "#!/bin/bash\necho hi\n", "job_name": "tab\there"},
        {"script_content": "#!/bin/bash\necho hi\n", "job_name": "x" * 201},
        {"script_content": "#!/bin/bash\necho \0\n"},
        {"script_content": ""},
    ],
)
async def test_bad_job_fields_are_422_before_anything_is_submitted(
    client: httpx.AsyncClient, svc_test_host: Host, body: dict[str, Any]
) -> None:
    detail(await client.post("/api/jobs", json=body), 422)
    assert (await client.get("/api/history")).json() == []


async def test_a_container_that_reads_as_an_option_is_422(client: httpx.AsyncClient) -> None:
    body = {"name": "c", "command": "true", "environment": {"container": "--bind=/:/host"}}
    assert "apptainer would read it as an option" in detail(await client.post("/api/scripts/preview", json=body), 422)


# -- YAML -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: a\x01\njobs: []\n", "line 1, column 8: character U+0001 is not allowed"),
        ("name: a\njobs:\n  - name: x\x00\n", "line 3, column 12: character U+0000"),
        (RECURSIVE, "an alias refers to a node that contains it"),
        (LAUGHS, "expands to more than 200000 nodes"),
        (DEEP, "nested more than 50 levels deep"),
        (chain(3).replace("command: echo 0", "command: echo 0\n    depends_on: [j2]"), "dependency cycle"),
    ],
)
async def test_hostile_yaml_is_a_clear_problem(
    client: httpx.AsyncClient, workflows: Path, text: str, problem: str
) -> None:
    started = time.process_time()
    body = (await client.post("/api/workflows/validate", json={"yaml": text})).json()
    assert body["valid"] is False
    assert any(problem in error for error in body["errors"]), body
    assert time.process_time() - started < 5  # CPU seconds (the server runs in this process): bounded work
    assert problem in detail(await client.post("/api/workflows/upload", json={"yaml": text, "filename": "x.yaml"}), 422)
    assert not workflows.exists() or not list(workflows.iterdir())


async def test_a_lone_surrogate_in_json_is_a_problem(client: httpx.AsyncClient) -> None:
    raw = b'{"yaml": "name: \\ud800\\n", "filename": "s.yaml"}'
    headers = {"content-type": "application/json"}
    assert "U+D800" in detail(await client.post("/api/workflows/upload", content=raw, headers=headers), 422)
    validate = await client.post(
        "/api/workflows/validate", content=raw.replace(b', "filename": "s.yaml"', b""), headers=headers
    )
    assert "U+D800" in validate.json()["errors"][0]


async def test_a_1000_job_chain_validates(client: httpx.AsyncClient) -> None:
    assert (await client.post("/api/workflows/validate", json={"yaml": chain(1000)})).json() == {"valid": True}


async def test_huge_upload_is_413(client: httpx.AsyncClient) -> None:
    text = "name: big\njobs:\n  - name: a\n    command: echo\n# " + "x" * (1024 * 1024) + "\n"
    assert "byte limit" in detail(
        await client.post("/api/workflows/upload", json={"yaml": text, "filename": "b.yml"}), 413
    )


async def test_create_refuses_nul_and_deep_structures(client: httpx.AsyncClient, workflows: Path) -> None:
    nul = {"name": "w", "jobs": [{"name": "a", "command": "echo \0"}]}
    assert "NUL" in detail(await client.post("/api/workflows/create", json=nul), 422)
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    nested = {"name": "w", "jobs": [{"name": "a", "command": "echo"}], "args": {"x": deep}}
    assert "nested more than" in detail(await client.post("/api/workflows/create", json=nested), 422)
    assert not workflows.exists() or not list(workflows.iterdir())


async def test_one_broken_file_does_not_break_the_listing(client: httpx.AsyncClient, workflows: Path) -> None:
    workflows.mkdir(parents=True)
    (workflows / "good.yaml").write_text(chain(2))
    (workflows / "bomb.yaml").write_text(LAUGHS)
    (workflows / "loop.yaml").write_text(RECURSIVE)
    (workflows / "deep.yaml").write_text(DEEP)
    (workflows / "huge.yaml").write_text("#" * (1024 * 1024 + 1))
    response = await client.get("/api/workflows")
    assert response.status_code == 200, response.text
    listed = {entry["name"]: entry for entry in response.json()}
    assert set(listed) == {"good", "bomb", "loop", "deep", "huge"}
    assert listed["good"]["valid"] is True
    for name in ("bomb", "loop", "deep", "huge"):
        assert listed[name]["valid"] is False
        assert listed[name]["errors"], listed[name]
    assert "byte limit" in listed["huge"]["errors"][0]
    loop = (await client.get("/api/workflows/loop")).json()
    assert loop["valid"] is False
    assert (loop["filename"], loop["name"]) == ("loop", None)  # a fatal document has no readable name
    assert "alias" in loop["errors"][0]


# -- templates ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("{{ x" + "|replace('a', x)" * 12 + " }}", "replace would build more than 1000000 characters"),
        ("{{ y ~ y ~ y }}", "'~' would build more than"),
        ("{{ y + y + y }}", "'+' would build more than"),
        ("{{ [y, y, y]|join(y) }}", "join would build more than"),
    ],
)
async def test_templates_cannot_blow_up(client: httpx.AsyncClient, template: str, problem: str) -> None:
    text = (
        f'name: t\nargs:\n  x: "{"a" * 100}"\n  y: "{"b" * 400_000}"\njobs:\n  - name: a\n    command: "{template}"\n'
    )
    started = time.process_time()
    body = (await client.post("/api/workflows/validate", json={"yaml": text})).json()
    assert time.process_time() - started < 5  # CPU seconds, whatever else the machine runs
    assert body["valid"] is False
    assert any(problem in error for error in body["errors"]), body


async def test_aliased_templates_are_bounded_in_total(client: httpx.AsyncClient) -> None:
    first = "  - name: j0\n    command: &c '{{ y ~ y }}'\n"
    jobs = first + "".join(f"  - name: j{i}\n    command: *c\n" for i in range(1, 12))
    text = f'name: t\nargs:\n  y: "{"b" * 400_000}"\njobs:\n{jobs}'
    body = (await client.post("/api/workflows/validate", json={"yaml": text})).json()
    assert body["valid"] is False
    assert any("render to more than 8000000 characters in all" in error for error in body["errors"]), body


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


YS = "[" + ", ".join(["y"] * 200) + "]"


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("{{ [1,1,1,1,1,1,1,1,1,1]|tojson(indent=20000000) }}", "tojson(indent=...) must be an integer from 0 to"),
        (f"{{{{ {YS}|tojson }}}}", "tojson would build more than"),
        (f"{{{{ {YS} }}}}", "would build more than"),
        (f"{{{{ {YS}|string }}}}", "would build more than"),
        ("{{ y|upper }}" * 200, "the template would build more than"),
        (f"{{{{ {YS.replace('y', 'y|upper')}|length }}}}", "the template builds more than"),
    ],
)
async def test_templates_stay_within_50_mb_while_they_render(
    client: httpx.AsyncClient, template: str, problem: str
) -> None:
    """The peak RSS of the server (this process) grows by less than 50 MB while a hostile template renders."""
    text = f'name: t\nargs:\n  y: "{"b" * 400_000}"\njobs:\n  - name: a\n    command: "{template}"\n'
    await client.post("/api/workflows/validate", json={"yaml": "name: warm\njobs: [{name: a, command: x}]\n"})
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak RSS, to the current RSS
    before = _status_kib("VmRSS")
    body = (await client.post("/api/workflows/validate", json={"yaml": text})).json()
    growth_mb = (_status_kib("VmHWM") - before) / 1024
    assert body["valid"] is False
    assert any(problem in error for error in body["errors"]), body
    assert growth_mb < 50, f"peak RSS grew by {growth_mb:.0f} MB"


# -- the event loop -------------------------------------------------------------------------------------------


async def test_create_validates_off_the_event_loop(client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big create is validated in a thread: a cheap request sent meanwhile is answered first. Its validation
    waits for that answer; on the event loop it would hold the cheap request up until it gave up waiting."""
    jobs = [{"name": f"j{i}", "command": f"echo {i}", "depends_on": [f"j{i - 1}"] if i else []} for i in range(2000)]
    finished: list[str] = []
    validating, answered = threading.Event(), threading.Event()

    def check_after_the_cheap_answer(document: dict[str, Any]) -> Any:
        validating.set()
        answered.wait(DEADLINE)
        return check_document(document)

    monkeypatch.setattr(workflow_routes, "check_document", check_after_the_cheap_answer)

    async def create() -> None:
        response = await client.post("/api/workflows/create", json={"name": "big", "jobs": jobs})
        assert response.status_code == 200, response.text
        finished.append("create")

    async def cheap() -> None:
        await eventually(validating.is_set, what="the create's validation")
        assert (await client.get("/api/workflows/runs?limit=1")).status_code == 200
        finished.append("cheap")
        answered.set()

    await asyncio.gather(create(), cheap())
    assert finished == ["cheap", "create"]
