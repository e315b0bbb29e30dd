"""Template limits through REST (issue 26, N12/N13): every template problem is an answer in words on validate,
preview, upload and create, a bad file never fails ``GET /api/workflows``, and generated templates never get a 5xx
nor grow the server's peak RSS past a bound."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc_host.api.routes import workflows as workflow_routes
from svc_host.host import Host
from svc_host.settings.paths import SvcPaths
from svc_host.testing.waiting import DEADLINE
from svc_host.workflows.summaries import summary as real_summary

ARGS = {"a": 1, "b": "two", "x": {"y": [1, 2]}}
NESTED = "{{ " + "(" * 70 + "a" + ")" * 70 + " }}"
IFS = "{% if a %}" * 70 + "x" + "{% endif %}" * 70
LONG_SUM = "{{ " + " + ".join(["1"] * 300) + " }}"
BIG = "{{ a }}{% if b %}-{% endif %}" * (200_000 // 29)
BAD = {
    "70-parentheses": (NESTED, "nested more than 20 levels"),
    "70-ifs": (IFS, "nested more than 20 levels"),
    "300-term-sum": (LONG_SUM, "nests more than 50 levels"),
    "200-kb": (BIG, "a template is at most 65536 characters"),
}


@pytest.fixture
async def client(svc_api_client: httpx.AsyncClient, svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    yield svc_api_client
    await svc_test_host.close_services()


@pytest.fixture
def workflows(svc_paths: SvcPaths) -> Path:
    return svc_paths.state_dir / "workflows"


def workflow_yaml(template: str, name: str = "t") -> str:
    return f"name: {name}\nargs: {json.dumps(ARGS)}\njobs:\n  - name: a\n    command: {json.dumps(template)}\n"


@pytest.mark.parametrize(("template", "words"), BAD.values(), ids=BAD.keys())
async def test_every_route_answers_a_bad_template_in_words(
    client: httpx.AsyncClient, workflows: Path, template: str, words: str
) -> None:
    text = workflow_yaml(template)
    validated = await client.post("/api/workflows/validate", json={"yaml": text})
    assert validated.status_code == 200, validated.text
    assert validated.json()["valid"] is False
    assert any(words in error for error in validated.json()["errors"]), validated.json()

    previewed = await client.post("/api/workflows/preview", json={"yaml": text})
    assert previewed.status_code == 200, previewed.text
    assert previewed.json()["valid"] is False
    assert any(words in error for error in previewed.json()["errors"]), previewed.json()

    uploaded = await client.post("/api/workflows/upload", json={"yaml": text, "filename": "t.yaml"})
    assert uploaded.status_code == 422, uploaded.text
    assert words in uploaded.json()["detail"]

    body = {"name": "t", "args": ARGS, "jobs": [{"name": "a", "command": template}]}
    created = await client.post("/api/workflows/create", json=body)
    assert created.status_code == 422, created.text
    assert words in created.json()["detail"]
    assert not workflows.exists() or not list(workflows.iterdir())  # nothing half-written


async def test_bad_template_files_are_listed_with_their_problem(client: httpx.AsyncClient, workflows: Path) -> None:
    """N13: one such file turned ``GET /api/workflows`` into a 500."""
    workflows.mkdir(parents=True)
    (workflows / "good.yaml").write_text(workflow_yaml("echo {{ a }}", name="good"))
    for name, (template, _) in BAD.items():
        (workflows / f"{name}.yaml").write_text(workflow_yaml(template, name=name))
    response = await client.get("/api/workflows")
    assert response.status_code == 200, response.text
    listed = {entry["name"]: entry for entry in response.json()}
    assert set(listed) == {"good", *BAD}
    assert listed["good"]["valid"] is True
    for name, (_, words) in BAD.items():
        assert listed[name]["valid"] is False
        assert any(words in error for error in listed[name]["errors"]), listed[name]
        shown = await client.get(f"/api/workflows/{name}")
        assert shown.status_code == 200, shown.text
        assert shown.json()["valid"] is False


async def test_a_check_that_fails_unforeseen_is_one_entry_not_a_500(
    client: httpx.AsyncClient, workflows: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workflows.mkdir(parents=True)
    (workflows / "good.yaml").write_text(workflow_yaml("echo {{ a }}", name="good"))
    (workflows / "odd.yaml").write_text(workflow_yaml("echo odd", name="odd"))

    def summary(name: str, text: str) -> dict[str, Any]:
        if name == "odd":
            raise RuntimeError("a bug svc did not foresee")
        return real_summary(name, text)

    monkeypatch.setattr(workflow_routes, "summary", summary)
    response = await client.get("/api/workflows")
    assert response.status_code == 200, response.text
    listed = {entry["name"]: entry for entry in response.json()}
    assert listed["good"]["valid"] is True
    assert listed["odd"]["valid"] is False
    assert listed["odd"]["errors"] == ["the file could not be checked: an internal error (logged by the server)"]


# -- generated templates -------------------------------------------------------------------------------------

LEAVES = st.sampled_from(["a", "b", "x.y", "x['y']", "x.y[0]", "1", "2.5", "'s'", "[1, 2]", "true", "none", "q"])
FILTERS = st.sampled_from(["upper", "length", "string", "trim", "default(1)", "replace('o', 'oo')", "tojson", "max"])
OPERATORS = st.sampled_from(["+", "-", "*", "/", "//", "%", "~", "and", "or", "==", "<", "in", "**"])


def expressions() -> st.SearchStrategy[str]:
    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, OPERATORS, inner).map(" ".join),
            inner.map(lambda e: f"({e})"),
            inner.map(lambda e: f"not {e}"),
            st.tuples(inner, FILTERS).map("|".join),
            st.tuples(inner, inner, inner).map(lambda t: f"{t[0]} if {t[1]} else {t[2]}"),
            st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        )

    deep = st.tuples(st.sampled_from(["(", "[", "not ", "-"]), st.integers(1, 120)).map(
        lambda t: t[0] * t[1] + "a" + {"(": ")", "[": "]"}.get(t[0], "") * t[1]
    )
    chains = st.tuples(st.sampled_from([" + 1", "|string", ".y", " ~ a", " if a else 1"]), st.integers(1, 400)).map(
        lambda t: "a" + t[0] * t[1]
    )
    big_literals = st.integers(1, 80_000).map(lambda n: "'" + "z" * n + "'")
    return st.recursive(st.one_of(LEAVES, deep, chains, big_literals), grow, max_leaves=30)


def templates() -> st.SearchStrategy[str]:
    tags = expressions().map(lambda e: "{{ " + e + " }}")
    text = st.text(alphabet="ab -{}%#", max_size=12)

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.lists(inner, min_size=1, max_size=5).map("".join),
            st.tuples(expressions(), inner).map(lambda t: "{% if " + t[0] + " %}" + t[1] + "{% endif %}"),
            st.tuples(inner, st.integers(1, 3000)).map(lambda t: t[0] * t[1]),
            st.tuples(st.integers(1, 100), inner).map(lambda t: "{% if a %}" * t[0] + t[1] + "{% endif %}" * t[0]),
        )

    return st.recursive(st.one_of(tags, text), grow, max_leaves=12).map(lambda t: t[:400_000])


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


async def test_generated_templates_never_get_a_5xx_and_stay_within_300_mb(client: httpx.AsyncClient) -> None:
    """Random nesting of blocks and expressions, long chains, big literals and repeated pieces through validate,
    preview and create: every answer is below 500, and the peak RSS of this process (the server's) grows by less
    than 300 MB over the whole run."""
    loop = asyncio.get_running_loop()
    names = itertools.count()
    statuses: set[int] = set()

    def post(url: str, body: dict[str, Any]) -> httpx.Response:
        future = asyncio.run_coroutine_threadsafe(client.post(url, json=body), loop)
        return future.result(timeout=DEADLINE * 10)

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(template=templates())
    def check(template: str) -> None:
        text = workflow_yaml(template)
        answers: list[Callable[[], httpx.Response]] = [
            lambda: post("/api/workflows/validate", {"yaml": text}),
            lambda: post("/api/workflows/preview", {"yaml": text}),
            lambda: post(
                "/api/workflows/create",
                {"name": f"g{next(names)}", "args": ARGS, "jobs": [{"name": "a", "command": template}]},
            ),
        ]
        for answer in answers:
            response = answer()
            statuses.add(response.status_code)
            assert response.status_code < 500, (template[:300], response.text[:500])
            if response.status_code >= 400:
                assert isinstance(response.json()["detail"], str), response.text[:500]

    await client.post("/api/workflows/validate", json={"yaml": workflow_yaml("{{ a }}")})
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak RSS, to the current RSS
    before = _status_kib("VmRSS")
    await asyncio.to_thread(check)
    growth_mb = (_status_kib("VmHWM") - before) / 1024
    assert growth_mb < 300, f"peak RSS grew by {growth_mb:.0f} MB"
    assert {200, 422} <= statuses  # the generator reached both valid and refused templates
    listing = await client.get("/api/workflows")
    assert listing.status_code == 200, listing.text[:500]
