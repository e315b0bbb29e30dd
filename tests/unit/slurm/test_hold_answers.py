"""Holding and releasing a sweep's queued jobs (issue 28, B38): scontrol's recorded answers for an array some of
whose tasks ended are no failure ("No error" is a success, "already finished" nothing to hold); a real failure
is said in scontrol's own words, without the "No error" lines."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from svc_host.errors import TransportError
from svc_host.slurm.hold_answers import hold_failures
from svc_host.transports.base import CommandResult, SlurmTransport

FIXTURES = Path(__file__).parents[2] / "fixtures"
PARTLY_FINISHED_24 = (FIXTURES / "slurm-24.11" / "scontrol_uhold_partly_finished.txt").read_text(encoding="utf-8")
FINISHED_22 = (FIXTURES / "slurm" / "scontrol_uhold_finished.txt").read_text(encoding="utf-8")
DENIED = "416_1-3: Access/permission denied\n416_0: Job has already finished\n"


class Recorded(SlurmTransport):
    """Answers every command with one recorded exit code and stderr."""

    name = "recorded"

    def __init__(self, exit_code: int, stderr: str) -> None:
        self.answer = (exit_code, stderr)
        self.calls: list[list[str]] = []

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        self.calls.append(list(argv))
        return CommandResult(list(argv), self.answer[0], "", self.answer[1])

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


def test_no_error_and_already_finished_are_no_failure() -> None:
    assert "No error" in PARTLY_FINISHED_24
    assert hold_failures(PARTLY_FINISHED_24) == []
    assert hold_failures(FINISHED_22) == []
    assert hold_failures(DENIED) == ["416_1-3: Access/permission denied"]


@pytest.mark.parametrize("release", [False, True])
def test_holding_an_array_with_ended_tasks_succeeds(release: bool) -> None:
    transport = Recorded(1, PARTLY_FINISHED_24)
    asyncio.run(transport.hold(["416"], release=release))
    assert transport.calls == [["scontrol", "release" if release else "uhold", "416"]]


def test_a_real_failure_says_what_failed_and_not_no_error() -> None:
    with pytest.raises(TransportError, match="scontrol uhold failed on transport 'recorded'") as caught:
        asyncio.run(Recorded(1, DENIED).hold(["416"]))
    assert "Access/permission denied" in caught.value.args[0]
    assert "No error" not in caught.value.args[0]
    with pytest.raises(TransportError, match="no reason given"):
        asyncio.run(Recorded(1, "").hold(["416"], release=True))


def test_a_released_arrays_none_reason_is_no_reason() -> None:
    """After a resume squeue says ``None`` for the released tasks until the scheduler judges them: the sweep says
    no reason rather than "None", and names the real one as soon as one task has it."""
    from svc_host.domain.jobs import JobState, JobStatus
    from svc_host.sweeps.queued import queue_reason

    def task(index: int, reason: str) -> JobStatus:
        return JobStatus(job_id=f"416_{index}", state=JobState.PENDING, raw_state="PENDING", reason=reason)

    assert queue_reason([task(1, "None"), task(2, "None")], "416") is None
    assert queue_reason([task(1, "None"), task(2, "None"), task(3, "JobArrayTaskLimit")], "416") == "array limit"
