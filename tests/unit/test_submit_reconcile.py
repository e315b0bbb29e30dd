"""A submission whose answer is lost (timeout, dropped connection) is looked up by its tag, never sent blindly again."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig
from svc_host.domain.submission import JobDefinition
from svc_host.errors import OutcomeUnknownError, TransportError
from svc_host.host import Host
from svc_host.plugin_core.records import TransportSpec
from svc_host.rendering.sbatch import render_sbatch
from svc_host.slurm.tags import find_tagged, lookup_argv, script_comment, tag_for
from svc_host.store import jobs as job_repo
from svc_host.transports.base import CommandResult, SlurmTransport

LOST = "lost"
"""sbatch reached the scheduler, then the connection dropped: the job exists, its id never came back."""
NEVER_SENT = "never-sent"
"""The connection dropped before sbatch reached the scheduler: no job."""
SLOW = "slow"
"""sbatch timed out; the scheduler accepts the job a few seconds later."""
LATE = "late"
"""The connection dropped; a slow slurmctld accepts the job only after every reconcile lookup came back without
it (right before svc would send sbatch once more)."""
HUNG = "hung"
"""sbatch timed out and no job ever appears."""


class FlakyCluster(SlurmTransport):
    """A scheduler whose first sbatch answers are lost in the ways above; later ones succeed."""

    name = "flaky"
    reconcile_delays = (0.0, 0.0, 0.0, 0.0)

    def __init__(self, *failures: str, lookups_fail: bool = False) -> None:
        self.failures = list(failures)
        self.lookups_fail = lookups_fail
        self.queue: dict[str, str] = {}  # job id -> comment
        self.sbatch_calls: list[tuple[list[str], bool]] = []
        self.lookups = 0
        self.appears_after: int | None = None
        self.pending: tuple[str, str] | None = None

    def _accept(self, comment: str) -> str:
        job_id = str(100 + len(self.queue))
        self.queue[job_id] = comment
        return job_id

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> CommandResult:
        argv = list(argv)
        if argv[0] == "mkdir":
            return CommandResult(argv, 0, "", "")
        if argv[0] == "sbatch":
            self.sbatch_calls.append((argv, idempotent))
            comment = next((a.partition("=")[2] for a in argv if a.startswith("--comment=")), None)
            comment = comment or script_comment(stdin or "") or ""
            failure = self.failures.pop(0) if self.failures else None
            if failure == LOST:
                self._accept(comment)
                raise OutcomeUnknownError("connection lost while sbatch ran", argv=argv)
            if failure == NEVER_SENT:
                raise OutcomeUnknownError("connection lost while sbatch ran", argv=argv)
            if failure == SLOW:
                self.appears_after = self.lookups + 3
                self.pending = ("", comment)
                raise OutcomeUnknownError("sbatch timed out after 60 s", argv=argv, timed_out=True)
            if failure == LATE:
                self.appears_after = self.lookups + len(self.reconcile_delays) + 1
                self.pending = ("", comment)
                raise OutcomeUnknownError("connection lost while sbatch ran", argv=argv)
            if failure == HUNG:
                raise OutcomeUnknownError("sbatch timed out after 60 s", argv=argv, timed_out=True)
            return CommandResult(argv, 0, f"{self._accept(comment)}\n", "")
        if argv == lookup_argv():
            self.lookups += 1
            if self.lookups_fail:
                raise TransportError("connection to 'flaky' lost running squeue")
            if self.pending is not None and self.appears_after is not None and self.lookups >= self.appears_after:
                self._accept(self.pending[1])
                self.pending = None
            lines = [f"{job_id}|{comment or '(null)'}" for job_id, comment in self.queue.items()]
            return CommandResult(argv, 0, "\n".join(["7|svc:someone-else", *lines]) + "\n", "")
        raise AssertionError(f"unexpected command {argv}")

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


def script(**fields: Any) -> Any:
    return render_sbatch(JobDefinition.model_validate({"name": "train", "command": "python train.py", **fields}))


async def test_sbatch_is_tagged_and_never_retried_by_the_transport() -> None:
    cluster = FlakyCluster()
    job_id = await cluster.submit(script())
    ((argv, idempotent),) = cluster.sbatch_calls
    assert job_id == "100"
    assert idempotent is False
    assert argv[:2] == ["sbatch", "--parsable"]
    assert argv[2].startswith("--comment=svc:")
    assert cluster.queue["100"] == argv[2].partition("=")[2]


async def test_a_job_accepted_before_the_connection_dropped_is_found_by_its_tag() -> None:
    cluster = FlakyCluster(LOST)
    assert await cluster.submit(script()) == "100"
    assert len(cluster.sbatch_calls) == 1
    assert list(cluster.queue) == ["100"]  # no duplicate


async def test_a_timed_out_submit_is_found_when_the_scheduler_catches_up() -> None:
    cluster = FlakyCluster(SLOW)
    assert await cluster.submit(script()) == "100"
    assert len(cluster.sbatch_calls) == 1
    assert cluster.lookups == 3


async def test_a_submission_that_never_reached_the_scheduler_is_sent_once_more_with_the_same_tag() -> None:
    cluster = FlakyCluster(NEVER_SENT)
    assert await cluster.submit(script()) == "100"
    first, second = (argv for argv, _ in cluster.sbatch_calls)
    assert first == second
    assert cluster.lookups == len(cluster.reconcile_delays) + 1  # absent through every lookup, and once more


async def test_a_job_accepted_late_is_found_right_before_sbatch_would_be_sent_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = FlakyCluster(LATE)
    with caplog.at_level("WARNING"):
        assert await cluster.submit(script()) == "100"
    assert len(cluster.sbatch_calls) == 1
    assert list(cluster.queue) == ["100"]  # no duplicate
    assert any("found right before sending sbatch again" in r.getMessage() for r in caplog.records)


async def test_two_lost_connections_give_up_without_a_third_sbatch() -> None:
    cluster = FlakyCluster(NEVER_SENT, NEVER_SENT)
    with pytest.raises(TransportError, match=r"no job tagged svc:\S+ appeared .*probably not submitted"):
        await cluster.submit(script())
    assert len(cluster.sbatch_calls) == 2
    assert cluster.queue == {}


async def test_a_timeout_without_a_job_is_an_error_naming_the_tag_and_is_not_retried() -> None:
    cluster = FlakyCluster(HUNG)
    with pytest.raises(TransportError, match=r"sbatch timed out after 60 s; no job tagged svc:\S+ appeared"):
        await cluster.submit(script())
    assert len(cluster.sbatch_calls) == 1


async def test_when_no_lookup_answers_the_outcome_stays_unknown_and_nothing_is_resent() -> None:
    cluster = FlakyCluster(NEVER_SENT, lookups_fail=True)
    with pytest.raises(TransportError, match=r"whether submission svc:\S+ reached the scheduler of 'flaky' is unknown"):
        await cluster.submit(script())
    assert len(cluster.sbatch_calls) == 1


async def test_a_workflow_marker_in_the_script_is_the_tag() -> None:
    marked = script()
    marked = marked.model_copy(update={"text": marked.text.replace("\n", "\n#SBATCH --comment=svc-wf:r1:train:2\n", 1)})
    cluster = FlakyCluster(LOST)
    assert await cluster.submit(marked) == "100"
    ((argv, _),) = cluster.sbatch_calls
    assert argv == ["sbatch", "--parsable"]  # the script's own marker is not overridden
    assert cluster.queue["100"] == "svc-wf:r1:train:2"


async def test_a_foreign_comment_is_kept_and_a_lost_answer_is_an_error() -> None:
    own = script(script="#!/bin/bash\n#SBATCH --comment=my-experiment\npython train.py\n", command=None)
    cluster = FlakyCluster(LOST)
    with pytest.raises(TransportError, match="the script sets its own --comment"):
        await cluster.submit(own)
    ((argv, _),) = cluster.sbatch_calls
    assert argv == ["sbatch", "--parsable"]
    assert cluster.lookups == 0


# -- the pure parts --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#!/bin/bash\necho hi\n", None),
        ("#!/bin/bash\n#SBATCH -J x\n#SBATCH --comment=svc-wf:a:b:1\necho\n", "svc-wf:a:b:1"),
        ("#!/bin/bash\n#SBATCH --comment svc:1 # note\n", "svc:1"),
        ("#!/bin/bash\n\n# plain comment\n#SBATCH --comment=a\n#SBATCH --comment=b\n", "b"),
        ("#!/bin/bash\necho\n#SBATCH --comment=late\n", None),  # after the first command: sbatch ignores it
        ('#!/bin/bash\n#SBATCH --comment "two words"\n', '"two'),
        ("#!/bin/bash\n#SBATCH --comment\n", ""),
    ],
)
def test_script_comment_reads_the_directive_block_like_sbatch(text: str, expected: str | None) -> None:
    assert script_comment(text) == expected


def test_tags_are_unique_and_only_svc_markers_are_trusted() -> None:
    assert tag_for("#!/bin/bash\necho\n") != tag_for("#!/bin/bash\necho\n")
    assert tag_for("#!/bin/bash\n#SBATCH --comment=svc-wf:r:j:1\n").value == "svc-wf:r:j:1"
    assert tag_for('#!/bin/bash\n#SBATCH --comment "svc-wf:r:j:1 x"\n').value is None


def test_find_tagged_takes_the_exact_comment() -> None:
    output = "7|svc:abc\n8|svc:abcd\n9|(null)\n12|svc:abc\n"
    assert find_tagged(output, "svc:abc") == "12"
    assert find_tagged(output, "svc:ab") is None


# -- through the one submit of every interface ------------------------------------------------------------------


async def test_a_single_job_whose_submit_timed_out_ends_tracked(
    svc_test_host: Host, svc_register_plugin: Callable[..., None]
) -> None:
    from svc_host.services import jobs

    cluster = FlakyCluster(SLOW)

    class Plugin:
        @hookimpl
        def svc_transports(self, config: HostConfig) -> list[TransportSpec]:
            return [TransportSpec(name="flaky", factory=lambda: cluster, description="flaky", remote=True)]

    svc_register_plugin(Plugin(), "flaky")
    record = await jobs.submit(
        svc_test_host, JobDefinition(name="train", command="true"), transport="flaky", source="cli"
    )

    assert record.job_id == "100"
    assert len(cluster.sbatch_calls) == 1
    stored = await svc_test_host.store.run(job_repo.find_job, "flaky", "100")
    assert stored is not None
    assert stored.state == "PENDING"
