"""``SlurmTransport``'s batching and its fallbacks, on recorded output (no scheduler needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from svc_host.domain.jobs import JobState
from svc_host.slurm.argv import program
from svc_host.transports.base import CommandResult, SlurmTransport, decode_complete

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"


class Scripted(SlurmTransport):
    """Answers each command from a table ``command -> (exit code, stdout, stderr)`` and records the calls."""

    name = "scripted"

    def __init__(self, answers: dict[str, tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> CommandResult:
        self.calls.append(list(argv))
        code, out, err = self.answers[program(argv)]
        return CommandResult(list(argv), code, out, err)

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


async def test_live_jobs_cost_one_squeue() -> None:
    transport = Scripted({"squeue": (0, recorded("squeue_jobs.txt"), "")})
    found = await transport.statuses(["5", "6", "14_1"])
    assert [program(call) for call in transport.calls] == ["squeue"]
    assert found["5"].name == "a|b c ünï"
    assert found["6"].gpus == 2
    assert found["14_1"].state is JobState.RUNNING


async def test_finished_and_unknown_jobs_cost_one_sacct_more() -> None:
    transport = Scripted({"squeue": (0, recorded("squeue_jobs.txt"), ""), "sacct": (0, recorded("sacct_jobs.txt"), "")})
    # 4488 and 4490 (exit 3, cancelled by root) are in the sacct recording only, so squeue does not know them.
    found = await transport.statuses(["5", "4488", "4490", "424242"])
    assert [program(call) for call in transport.calls] == ["squeue", "sacct"]
    sacct_ids = next(arg for arg in transport.calls[1] if arg.startswith("--jobs="))
    assert sacct_ids == "--jobs=4488,4490,424242"  # only what squeue could not settle
    assert (found["4488"].state, found["4488"].exit_code) == (JobState.FAILED, 3)
    assert found["4490"].raw_state == "CANCELLED by 0"
    assert found["4490"].ended_at is not None
    assert "424242" not in found  # unknown is absent, never "failed"


async def test_squeue_refusing_unknown_ids_means_not_live() -> None:
    transport = Scripted(
        {
            "squeue": (1, "", "slurm_load_jobs error: Invalid job id specified\n"),
            "sacct": (0, recorded("sacct_jobs.txt"), ""),
        }
    )
    found = await transport.statuses(["4487"])
    assert found["4487"].state is JobState.COMPLETED


async def test_an_accounting_outage_never_fails_running_jobs_and_scontrol_tells_the_ends() -> None:
    down = (1, "", "sacct: error: Problem talking to the database: Connection refused\n")
    transport = Scripted(
        {
            "squeue": (0, recorded("squeue_jobs.txt"), ""),
            "sacct": down,
            "scontrol": (0, recorded("scontrol_show_job.txt"), ""),
        }
    )
    found = await transport.statuses(["5", "9", "99999"])
    assert [program(call) for call in transport.calls] == ["squeue", "sacct", "scontrol"]
    assert found["5"].state is JobState.RUNNING
    assert (found["9"].state, found["9"].exit_code) == (JobState.FAILED, 3)  # squeue has no exit code
    assert "99999" not in found


async def test_with_accounting_and_slurmctld_down_ended_jobs_stay_unknown() -> None:
    down = (1, "", "sacct: error: Problem talking to the database: Connection refused\n")
    refused = (1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n")
    transport = Scripted({"squeue": (1, "", "Invalid job id specified"), "sacct": down, "scontrol": refused})
    assert await transport.statuses(["9"]) == {}


async def test_without_accounting_scontrol_tells_the_end() -> None:
    disabled = (1, "", "sacct: error: Slurm accounting storage is disabled\n")
    transport = Scripted(
        {
            "squeue": (1, "", "Invalid job id specified"),
            "sacct": disabled,
            "scontrol": (0, recorded("scontrol_show_job.txt"), ""),
        }
    )
    found = await transport.statuses(["9"])
    assert [program(call) for call in transport.calls] == ["squeue", "sacct", "scontrol"]
    assert found["9"].state is JobState.FAILED


def test_utf8_is_never_split_inside_a_character() -> None:
    data = "ab✓".encode()
    assert decode_complete(data[:-1], at_eof=False) == ("ab", 2)
    assert decode_complete(data, at_eof=False) == ("ab✓", 5)
    assert decode_complete(data[:-1], at_eof=True)[0] == "ab\ufffd"
