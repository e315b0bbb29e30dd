"""Random job ids through every face (REST job routes, MCP job tools, the CLI's job id arguments): the answer is the
job asked for, "not found", or the face's own bad-id error; never another job, a 5xx or a traceback.

Ids are drawn by hypothesis: ids in the one spelling svc takes, the same numbers in other scripts' digits
(Arabic-Indic ``٨٨٦`` is 886 to Python's ``int``), with leading zeros (``0886`` is 886 to Slurm), huge numbers, array
forms and noise. The transport is the in-memory fake (the answers of a real Slurm are tests/unit/slurm/
test_job_answers.py's and tests/integration/test_job_answers_on_the_cluster.py's).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from svc_host.cli import cli
from svc_host.cli.options import check_job_id
from svc_host.domain.bounds import MAX_JOB_ID
from svc_host.domain.jobs import JobState
from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.services import jobs
from svc_host.testing.fake import FakeTransport

CANONICAL = re.compile(r"(?P<array>0|[1-9][0-9]*)(?:_(?:0|[1-9][0-9]*))?")
SCRIPTS = [
    "0123456789",
    "٠١٢٣٤٥٦٧٨٩",
    "۰۱۲۳۴۵۶۷۸۹",
    "०१२३४५६७८९",
    "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19",
]
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
MINE, OTHER = "1000", "1001"
"""The ids the fake transport gives the two jobs the tests submit."""


def in_script(number: int, digits: str) -> str:
    return "".join(digits[int(char)] for char in str(number))


def spelled(number: int, pick: int) -> str:
    """``number`` in one of the scripts, or mixed: one digit of the ASCII spelling swapped for another script's."""
    scripts = [*SCRIPTS, SUPERSCRIPTS]
    if pick < len(scripts):
        return in_script(number, scripts[pick])
    text = str(number)
    where = pick % len(text)
    return text[:where] + in_script(int(text[where]), scripts[1 + pick % (len(scripts) - 1)]) + text[where + 1 :]


numbers = st.one_of(
    st.sampled_from([0, 1, int(MINE), int(OTHER), MAX_JOB_ID]), st.integers(0, 10**6), st.integers(0, 10**40)
)
job_ids = st.one_of(
    numbers.map(str),
    st.builds(lambda n, t: f"{n}_{t}", numbers, st.integers(0, 10**4)),
    st.builds(spelled, numbers, st.integers(0, 20)),
    st.builds(lambda zeros, n: "0" * zeros + str(n), st.integers(1, 12), numbers),
    st.builds(lambda n, zeros, t: f"{n}_{'0' * zeros}{t}", numbers, st.integers(1, 3), st.integers(0, 99)),
    st.builds(lambda n, a, b: f"{n}_[{a}-{b}]", numbers, st.integers(0, 9), st.integers(0, 99)),
    st.from_regex(r"[ 0-9_+\[\]%,.a-z\u0660-\u0669-]{1,30}", fullmatch=True),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=12),
).filter(lambda job_id: "/" not in job_id and job_id.strip("."))


def drawn(count: int = 300) -> list[str]:
    """``count`` ids drawn by hypothesis (collected, then sent by the async test: hypothesis runs sync functions)."""
    found: list[str] = []

    @settings(max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(job_ids)
    def collect(job_id: str) -> None:
        found.append(job_id)

    collect()
    mine = int(MINE)
    return [*dict.fromkeys([MINE, f"0{MINE}", in_script(mine, SCRIPTS[1]), in_script(mine, SUPERSCRIPTS), *found])]


def canonical_array(job_id: str) -> int | None:
    """The array's (job's) number of an id svc takes, or None for an id it refuses."""
    match = CANONICAL.fullmatch(job_id)
    return int(match["array"]) if match is not None and int(match["array"]) <= MAX_JOB_ID else None


@pytest.fixture
async def two_jobs(fake: FakeTransport, svc_test_host: Host) -> FakeTransport:
    """Two jobs svc submitted (``MINE`` and ``OTHER``), both running, each with its own stdout."""
    for name in ("mine", "other"):
        record = await jobs.submit(
            svc_test_host, JobDefinition(name=name, command="true"), transport="fake", source="cli"
        )
        fake.set_state(record.job_id, JobState.RUNNING)
        assert record.stdout_path is not None
        fake.write_log(record.stdout_path, f"output of {record.job_id}\n".encode())
    assert sorted(fake.jobs) == [MINE, OTHER]
    return fake


async def test_rest_job_routes_answer_the_job_asked_or_refuse_the_id(
    two_jobs: FakeTransport, svc_api_client: httpx.AsyncClient
) -> None:
    for job_id in drawn():
        path = f"/api/jobs/{quote(job_id, safe='')}"
        number = canonical_array(job_id)
        answers = {
            "GET": await svc_api_client.get(path, params={"transport": "fake"}),
            "logs": await svc_api_client.get(f"{path}/logs", params={"transport": "fake"}),
        }
        if job_id not in two_jobs.jobs:  # cancelling ours would change what the next ids are compared with
            answers["DELETE"] = await svc_api_client.delete(path, params={"transport": "fake"})
        for route, answer in answers.items():
            shown = f"{route} {job_id!r}: {answer.status_code} {answer.text[:300]}"
            assert answer.status_code < 500, shown
            assert "Traceback" not in answer.text, shown
            if number is None and route == "DELETE" and re.fullmatch(r"[0-9]{1,10}_\[[0-9]+-[0-9]+\]", job_id):
                # a range, DELETE's own form: 422 "no task of it is live" is for an array that exists (ours)
                assert answer.status_code in (400, 404, 422), shown
                assert answer.status_code != 422 or job_id.split("_")[0] in two_jobs.jobs, shown
            elif number is None:
                assert answer.status_code == (422 if len(job_id) > 64 else 400), shown
                assert set(answer.json()) <= {"detail", "errors"}, shown
            elif job_id in two_jobs.jobs:
                assert answer.status_code == 200, shown
                body = answer.json()
                if route == "GET":
                    assert str(body["job_id"]) == job_id, shown
                else:
                    assert body["stdout"] == f"output of {job_id}\n", shown
            else:
                assert answer.status_code == 404, shown
                assert "output of" not in answer.text, shown


async def test_mcp_job_tools_answer_the_job_asked_or_refuse_the_id(
    two_jobs: FakeTransport, svc_mcp_client: Callable[[], AbstractAsyncContextManager[Client]]
) -> None:
    async with svc_mcp_client() as client:

        async def call(tool: str, job_id: str) -> dict[str, Any]:
            result = await client.call_tool(tool, {"job_id": job_id, "transport": "fake"})
            content: dict[str, Any] | None = result.structured_content
            assert content is not None, (tool, job_id, result)
            return content

        for job_id in drawn():
            asked = job_id.strip()  # MCP takes an id with spaces around it
            number = canonical_array(asked)
            tools = ["get_job_status", "get_job_logs"] + ([] if asked in two_jobs.jobs else ["cancel_job"])
            for tool in tools:
                answer = await call(tool, job_id)
                shown = f"{tool} {job_id!r}: {answer}"
                if number is None or number == 0:
                    assert answer["success"] is False, shown
                    assert answer["error"].startswith("job_id"), shown
                elif asked in two_jobs.jobs:
                    assert answer["success"] is True, shown
                    assert answer["job_id"] == asked, shown
                    if tool == "get_job_logs":
                        assert answer["stdout"] == f"output of {asked}\n", shown
                else:
                    assert answer["success"] is False, shown
                    assert answer["error"] == f"job {asked} not found on transport 'fake'", shown


@settings(max_examples=300, database=None, deadline=None)
@given(job_ids)
def test_cli_job_id_arguments_take_the_one_spelling_and_refuse_the_rest_in_one_error(job_id: str) -> None:
    number = canonical_array(job_id)
    if number is not None:
        check_job_id(job_id)
        return
    for command in ("status", "logs", "cancel", "why", "eff"):
        result = CliRunner().invoke(cli, [command, "--", job_id])
        shown = f"svc {command} -- {job_id!r}: exit {result.exit_code}: {result.output}"
        assert result.exit_code == 2, shown
        assert result.exception is None or isinstance(result.exception, SystemExit), shown
        assert "Error: Invalid value" in result.output, shown
        assert "Traceback" not in result.output, shown
