"""``POST /api/workflows/preview``: the parsed document, the problems at their lines, the run order and the dry
run of a selection, for text that is not saved anywhere (the dashboard's editor and builder)."""

from __future__ import annotations

import httpx

DIAMOND = """name: diamond
args:
  msg: hi
jobs:
  - name: a
    command: "echo {{ msg }}"
  - name: b
    command: [echo, b]
    depends_on: [a]
  - name: c
    command: [echo, c]
    depends_on: [a]
    resources: {gpus_per_node: 1}
  - name: d
    command: [echo, d]
    depends_on: [b, "afterany:c"]
"""


async def test_a_valid_text_gives_its_document_order_and_dry_run(svc_api_client: httpx.AsyncClient) -> None:
    answer = (await svc_api_client.post("/api/workflows/preview", json={"yaml": DIAMOND})).json()
    assert answer["valid"] is True
    assert answer["errors"] == []
    assert answer["order"] == ["a", "b", "c", "d"]
    assert answer["document"]["jobs"][0] == {"name": "a", "command": "echo {{ msg }}"}  # templates as written
    assert answer["document"]["jobs"][2]["resources"] == {"gpus_per_node": 1}  # only what the file gives
    assert [job["name"] for job in answer["jobs_to_execute"]] == ["a", "b", "c", "d"]
    assert answer["jobs_to_execute"][0]["command"] == "echo hi"


async def test_a_selection_cuts_the_dry_run_and_a_bad_one_is_reported_apart(svc_api_client: httpx.AsyncClient) -> None:
    cut = (await svc_api_client.post("/api/workflows/preview", json={"yaml": DIAMOND, "from_job": "c"})).json()
    assert [(job["name"], job["depends_on"]) for job in cut["jobs_to_execute"]] == [
        ("c", []),
        ("d", ["afterany:c"]),
    ]
    bad = (await svc_api_client.post("/api/workflows/preview", json={"yaml": DIAMOND, "single_job": "zz"})).json()
    assert bad["valid"] is True
    assert bad["jobs_to_execute"] is None
    assert bad["selection_errors"] == ["single_job: job 'zz' is not in workflow 'diamond'; jobs: a, b, c, d"]


async def test_an_invalid_text_gives_the_validate_problems_with_their_lines(svc_api_client: httpx.AsyncClient) -> None:
    text = DIAMOND.replace("depends_on: [a]\n    resources", "depends_on: [zz]\n    resources")
    answer = (await svc_api_client.post("/api/workflows/preview", json={"yaml": text})).json()
    validated = (await svc_api_client.post("/api/workflows/validate", json={"yaml": text})).json()
    assert answer["valid"] is False
    assert answer["errors"] == validated["errors"]
    assert any(error.startswith("line 12:") for error in answer["errors"]), answer["errors"]
    assert answer["document"]["name"] == "diamond"
    broken = (await svc_api_client.post("/api/workflows/preview", json={"yaml": "name: [x\n"})).json()
    assert broken["document"] is None
    assert broken["errors"][0].startswith("line 2")
