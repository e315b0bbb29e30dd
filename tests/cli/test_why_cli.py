"""``svc why`` and ``svc submit --test-only`` in a fresh process against the dev cluster."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable

import pytest

from svc_host.testing.waiting import eventually_blocking

pytestmark = pytest.mark.cluster
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def wide_job(slurm_cluster: None, sbatch_job: Callable[..., str]) -> str:
    """A job asking for two nodes of partition multi, whose second node is always down."""
    return sbatch_job("-N2", "-p", "multi", "-J", "cli-wide", "--wrap", "true")


def test_why_names_the_down_node(svc_cli: Cli, wide_job: str) -> None:

    def why() -> subprocess.CompletedProcess[str]:
        result = svc_cli("why", wide_job)
        assert result.returncode == 0, result.stderr
        return result

    result = eventually_blocking(
        why, until=lambda result: "phantom" in result.stdout, interval=0.5, what="svc why naming the down node"
    )
    # From one scheduling pass to the next Slurm's reason names the node ("ReqNodeNotAvail,
    # UnavailableNodes:phantom"), or not ("Nodes required for job are DOWN, ..."): then svc names it, with its
    # state from sinfo.
    line = (
        rf"{wide_job}: Nodes job {wide_job} needs are unavailable: phantom( \(down\*?\))?\. It asks for 2 nodes "
        r"and partition 'multi' has 1 up: it starts only when enough nodes come back, or ask for fewer nodes\."
    )
    assert len(result.stdout.splitlines()) == 1, result.stdout  # no "expected start": it will not start as it is
    assert re.fullmatch(line, result.stdout.strip()), result.stdout
    answer = json.loads(svc_cli("why", wide_job, "--json").stdout)
    assert answer[0]["limit"] == {"scope": "nodes", "name": "multi", "field": "NumNodes", "value": "2", "used": "1"}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("why", "999999999"), 1, "error: job 999999999 not found on transport 'local'"),
        (("why", "-t", "nope", "5"), 1, "error: unknown transport 'nope'"),
        (("why", "12abc"), 2, "'12abc' is not a job id"),
    ],
)
def test_why_bad_input_is_one_line(svc_cli: Cli, args: tuple[str, ...], code: int, message: str) -> None:
    result = svc_cli(*args)
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_submit_test_only(svc_cli: Cli, slurm_cluster: None) -> None:
    fits = svc_cli("submit", "--test-only", "-p", "debug", "--time", "5", "--name", "cli-fit", "--", "true")
    assert fits.returncode == 0, fits.stderr
    assert "on localhost in partition 'debug' (1 processor)" in fits.stdout
    refused = svc_cli("submit", "--test-only", "-p", "gpu", "-G", "9", "--", "true")
    assert refused.returncode == 1
    assert refused.stdout == "Slurm would not accept this job: Requested node configuration is not available.\n"
    never = svc_cli("submit", "--test-only", "-p", "short", "--time", "10", "--json", "--", "true")
    assert never.returncode == 1
    assert json.loads(never.stdout)["fits"] is False
    queue = subprocess.run(["squeue", "-h", "-n", "cli-fit"], capture_output=True, text=True, timeout=60, check=True)
    assert queue.stdout == ""
