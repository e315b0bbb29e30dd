"""An answer is about the job asked for: one spelling per job id, and every Slurm answer filtered to the ids asked.

The whole-cluster listings are real recordings (``scontrol --oneliner show job`` without an id, as the transport
runs it while accounting is down): tests/fixtures/slurm (22.05, jobs of root and svcdev) and
tests/fixtures/slurm-24.11; see their README.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import ValidationError

from svc_host.domain.jobs import JobState
from svc_host.domain.submission import JobDefinition
from svc_host.errors import SlurmParseError
from svc_host.slurm import answers, argv, arrays
from svc_host.slurm.arrays import MisspelledJobId, checked_job_id
from svc_host.slurm.parse import parse_sacct, parse_sbatch, parse_scontrol_jobs
from svc_host.transports.base import CommandResult, SlurmTransport

FIXTURES = Path(__file__).parents[2] / "fixtures"
WHOLE_CLUSTER = {
    "22.05": FIXTURES / "slurm" / "scontrol_show_job.txt",
    "24.11": FIXTURES / "slurm-24.11" / "scontrol_show_job.txt",
}
DB_DOWN = "sacct: error: Problem talking to the database: Connection refused\n"
NOT_IN_SLURMCTLD = "slurm_load_jobs error: Invalid job id specified\n"

UNICODE_886 = [
    "\u0668\u0668\u0666",
    "\u06f8\u06f8\u06f6",
    "\u096e\u096e\u096c",
    "\uff18\uff18\uff16",
    "\u2078\u2078\u2076",
    "8\u06686",
    "12_\u0663",
]
"""886 in Arabic-Indic, Persian and Devanagari digits, fullwidth, superscript; mixed; a task in Arabic-Indic."""


@pytest.mark.parametrize("job_id", UNICODE_886)
def test_digits_other_than_ascii_are_refused_everywhere(job_id: str) -> None:
    with pytest.raises(
        MisspelledJobId, match="has digits other than 0-9: write it in ASCII digits, as Slurm prints it"
    ):
        checked_job_id(job_id)
    with pytest.raises(ValueError, match="invalid Slurm job id"):
        argv.scontrol_show_job_argv(job_id)
    assert not arrays.is_slurm_id(job_id)


@pytest.mark.parametrize(
    ("typed", "spelled"),
    [("0000000886", "886"), ("0886", "886"), ("886_04", "886_4"), ("00_1", "0_1"), ("886_00", "886_0")],
)
def test_a_leading_zero_is_refused_with_the_spelling_slurm_prints(typed: str, spelled: str) -> None:
    with pytest.raises(MisspelledJobId, match=f"job id '{typed}' has a leading zero: write it as Slurm prints it, "):
        checked_job_id(typed)
    with pytest.raises(MisspelledJobId, match=f"'{spelled}'$"):
        checked_job_id(typed)
    with pytest.raises(ValueError, match="invalid Slurm job id"):
        argv.squeue_argv([typed])


def test_ranges_are_checked_for_leading_zeros_too() -> None:
    with pytest.raises(MisspelledJobId, match="write it as Slurm prints it, '12_\\[1-3,7\\]'"):
        checked_job_id("12_[01-03,7]", ranges=True)
    assert checked_job_id("12_[0-3,10]", ranges=True) == "12_[0-3,10]"


@pytest.mark.parametrize("job_id", ["0", "886", "886_0", "886_10", "4294967295"])
def test_the_one_spelling_passes(job_id: str) -> None:
    assert checked_job_id(job_id) == job_id
    assert arrays.is_slurm_id(job_id)


def test_huge_numbers_are_a_plain_refusal_not_a_crash() -> None:
    for job_id in ("9" * 21, "1" * 5000, "4294967296", "1_" + "9" * 5000):
        with pytest.raises(ValueError, match="job id must be a non-negative integer"):
            checked_job_id(job_id)


def test_slurm_forms_svc_reads_keep_passing_the_argv_check() -> None:
    for job_id in ("123", "123_4", "123_[4-9%2]", "123_[1,3,5-7]", "123+1"):
        assert argv.scancel_argv([job_id]) == ["scancel", job_id]


def test_a_dependency_names_jobs_in_ascii_digits() -> None:
    assert JobDefinition(command="true", dependency="afterok:12:13_4,afterany:7").dependency
    for dependency in ("afterok:٨٨٦", "afterok:\uff10\uff11", "afterok:012", "afterany:12_07"):
        with pytest.raises(ValidationError, match="dependency"):
            JobDefinition(command="true", dependency=dependency)


def test_sbatch_answers_in_ascii_digits() -> None:
    assert parse_sbatch("886;lab\n") == "886"
    with pytest.raises(SlurmParseError, match="sbatch printed no job id"):
        parse_sbatch("\u0668\u0668\u0666\n")


@pytest.mark.parametrize(
    ("asked", "answered", "about"),
    [
        ("123", "123", True),
        ("123_4", "123_[4-9]", True),
        ("123_4", "123_[1-3,4%2]", True),
        ("123", "123_4", True),  # an array's own id stands for its tasks
        ("123", "123_[5-9%2]", True),
        ("123", "123+1", True),  # and a heterogeneous job's for its components
        ("123_4", "123_[5-9]", False),
        ("123_4", "123", False),
        ("123_4", "123_5", False),
        ("12", "123", False),
        ("123", "1234_1", False),
        ("886", "0886", False),
        ("886", "٨٨٦", False),
    ],
)
def test_which_answers_are_about_the_job_asked(asked: str, answered: str, about: bool) -> None:
    assert arrays.answers(asked, answered) is about


@pytest.mark.parametrize("version", sorted(WHOLE_CLUSTER))
def test_a_whole_cluster_listing_holds_no_answer_about_an_unknown_job(version: str) -> None:
    listing = parse_scontrol_jobs(WHOLE_CLUSTER[version].read_text())
    assert len({job.job_id for job in listing}) > 20  # other jobs, other users' on 22.05
    assert answers.record_for("12345", listing) is None
    assert answers.records_about(["12345", "999999"], listing) == []


def test_records_about_keeps_the_jobs_asked_their_tasks_and_the_ranges_holding_them() -> None:
    listing = parse_scontrol_jobs(WHOLE_CLUSTER["22.05"].read_text())
    kept = [job.job_id for job in answers.records_about(["9", "14", "15_1", "424242"], listing)]
    assert kept == ["9", "14_0", "15_[0-2]", "14_1", "14_2"]  # Slurm's order; 15_1 is pending inside 15_[0-2]


def test_record_for_prefers_the_exact_record_then_the_range_under_the_id_asked() -> None:
    listing = parse_scontrol_jobs(WHOLE_CLUSTER["22.05"].read_text())
    assert answers.record_for("9", listing).exit_code == 3  # type: ignore[union-attr]
    pending = answers.record_for("15_1", listing)
    assert pending is not None
    assert (pending.job_id, pending.state, pending.name) == ("15_1", JobState.PENDING, "pendarr")
    whole = answers.record_for("14", listing)
    assert whole is not None
    assert whole.job_id in {"14_0", "14_1", "14_2"}


class ByArgv(SlurmTransport):
    """Answers each command by its program and whether it names a job: ``(program, named)`` -> (exit, out, err)."""

    name = "recorded"

    def __init__(self, answers: dict[tuple[str, bool], tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        self.calls.append(list(argv))
        program = argv[2] if argv[0] == "env" else argv[0]
        named = any(word.startswith("--jobs=") for word in argv) or (program == "scontrol" and len(argv) > 4)
        code, out, err = self.answers[(program, named)]
        return CommandResult(list(argv), code, out, err)

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


def accounting_down(version: str) -> ByArgv:
    """slurmdbd down (sacct fails), slurmctld no longer holding the id asked, and its whole listing recorded."""
    return ByArgv(
        {
            ("scontrol", True): (1, "", NOT_IN_SLURMCTLD),
            ("sacct", True): (1, "", DB_DOWN),
            ("scontrol", False): (0, WHOLE_CLUSTER[version].read_text(), ""),
            ("squeue", True): (1, "", NOT_IN_SLURMCTLD),
        }
    )


@pytest.mark.parametrize("version", sorted(WHOLE_CLUSTER))
async def test_describe_with_accounting_down_is_not_found_never_the_first_job_listed(version: str) -> None:
    """The reviewer's N10: ``GET /api/jobs/12345`` answered with another user's job (the listing's first)."""
    transport = accounting_down(version)
    assert await transport.describe("12345") is None
    assert [call[0] if call[0] != "env" else call[2] for call in transport.calls] == ["scontrol", "sacct", "scontrol"]
    assert await transport.statuses(["12345"]) == {}


@pytest.mark.parametrize("version", sorted(WHOLE_CLUSTER))
async def test_statuses_store_each_answer_under_its_own_id_only(version: str) -> None:
    """What the monitor stores: ``statuses`` of a batch with sacct failing keys each job by its own id."""
    listing = [job.job_id for job in parse_scontrol_jobs(WHOLE_CLUSTER[version].read_text())]
    asked = [listing[3], "12345", listing[-1], f"{listing[0]}_99"]
    found = await accounting_down(version).statuses(asked)
    assert sorted(found) == sorted([listing[3], listing[-1]])
    assert all(job.job_id == job_id for job_id, job in found.items())


async def test_describe_with_accounting_down_still_finds_the_job_asked_in_the_listing() -> None:
    transport = accounting_down("22.05")
    found = await transport.describe("9")
    assert found is not None
    assert (found.job_id, found.state, found.exit_code) == ("9", JobState.FAILED, 3)


async def test_describe_filters_scontrols_own_answer_too() -> None:
    """Whatever ``scontrol show job ID`` prints, only a record about ID is an answer (here, a listing of others)."""
    listing = WHOLE_CLUSTER["22.05"].read_text()
    transport = ByArgv({("scontrol", True): (0, listing, "")})
    assert await transport.describe("12345") is None
    found = await transport.describe("15_2")
    assert found is not None
    assert (found.job_id, found.state) == ("15_2", JobState.PENDING)  # inside 15_[0-2], answered under its own id


async def test_accounting_answers_are_filtered_to_the_ids_asked() -> None:
    recorded = (FIXTURES / "slurm" / "sacct_jobs.txt").read_text()
    others = [job.job_id for job in parse_sacct(recorded)]
    transport = ByArgv(
        {
            ("scontrol", True): (1, "", NOT_IN_SLURMCTLD),
            ("sacct", True): (0, recorded, ""),  # a sacct that answers more than it was asked
            ("squeue", True): (1, "", NOT_IN_SLURMCTLD),
        }
    )
    assert others
    assert await transport.describe("12345") is None
    assert await transport.statuses(["12345"]) == {}
    found = await transport.describe(others[-1])
    assert found is not None
    assert found.job_id == others[-1]
