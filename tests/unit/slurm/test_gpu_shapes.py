"""Every GPU shape a cluster reports: typed, several types on one node, MIG slices, ``(IDX:...)`` in GresUsed,
a node in several partitions, drained and down nodes, and jobs asking with --gpus / --gpus-per-task /
--gpus-per-node. Recorded output of Slurm 22.05 (``../../fixtures/slurm``) and 24.11 (``slurm-24.11``), and one
composed file (``sinfo_gpu_shapes.txt``, sinfo's format with shapes no dev cluster has: see the README)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from svc_host.domain.resources import GpuTypeAvailability
from svc_host.slurm.parse import (
    gpu_types_in_gres,
    gpu_types_in_tres,
    parse_scontrol_jobs,
    parse_scontrol_nodes,
    parse_sinfo,
    parse_squeue,
)
from svc_host.slurm.resources import summarize, summarize_cluster

FIXTURES = Path(__file__).parents[2] / "fixtures"
NOW = datetime(2026, 11, 27, tzinfo=UTC)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("gres", "types"),
    [
        ("gpu:4", {"": 4}),
        ("gpu:(null):2(IDX:0-1)", {"": 2}),
        ("gpu:a100:4(S:0-1)", {"a100": 4}),
        ("gpu:a100:2(IDX:0,2),gpu:v100:1(IDX:3)", {"a100": 2, "v100": 1}),
        ("gpu:a100_3g.20gb:7", {"a100_3g.20gb": 7}),
        ("gpu:a100", {"a100": 1}),
        ("gpu:v100:0(IDX:N/A),mps:100", {"v100": 0}),
        ("(null)", {}),
    ],
)
def test_gpu_types_of_a_gres_string(gres: str, types: dict[str, int]) -> None:
    assert dict(gpu_types_in_gres(gres)) == types


def test_gpu_types_of_a_tres_string() -> None:
    assert dict(gpu_types_in_tres("cpu=7,mem=7000M,gres/gpu=3,gres/gpu:a100=2,gres/gpu:v100=1")) == {
        "a100": 2,
        "v100": 1,
    }
    assert dict(gpu_types_in_tres("cpu=1,gres/gpu=2")) == {"": 2}


def avail(kind: str | None, total: int, in_use: int) -> GpuTypeAvailability:
    return GpuTypeAvailability(type=kind, total=total, in_use=in_use, available=total - in_use)


def test_partitions_and_the_cluster_count_every_shape_per_type() -> None:
    nodes = parse_sinfo(fixture("slurm/sinfo_gpu_shapes.txt"))
    by_name = {snap.partition: snap for snap in summarize(nodes, [], now=NOW)}
    gpu = by_name["gpu"]  # a100n2 is drained: its four A100s are not offered
    assert gpu.gpu_types == [avail("a100", 6, 5), avail("v100", 2, 0)]
    assert (gpu.total_gpus, gpu.gpus_in_use, gpu.gpus_available, gpu.nodes_down) == (8, 5, 3, 1)
    assert by_name["long"].gpu_types == [avail("a100", 4, 3)]  # v100n1 is down
    assert by_name["mig"].gpu_types == [avail("a100_3g.20gb", 7, 0)]
    assert by_name["cpu"].gpu_types == []
    cluster = summarize_cluster(nodes, [], now=NOW)  # a100n1 is in gpu and long: counted once
    assert cluster.gpu_types == [avail("a100", 6, 5), avail("a100_3g.20gb", 7, 0), avail("v100", 2, 0)]
    assert (cluster.total_gpus, cluster.gpus_in_use) == (15, 5)


def test_slurm_24_11_mixed_node_from_sinfo_and_from_scontrol_agree() -> None:
    """node24: Gres=gpu:a100:2,gpu:v100:2 in debug and gpu, jobs holding both A100s and one V100."""
    expected = [avail("a100", 2, 2), avail("v100", 2, 1)]
    for nodes in (
        parse_sinfo(fixture("slurm-24.11/sinfo.txt")),
        parse_scontrol_nodes(fixture("slurm-24.11/scontrol_show_node_details.txt")),
        parse_scontrol_nodes(fixture("slurm-24.11/scontrol_show_node.txt")),  # no GresUsed: from AllocTRES
    ):
        snapshots = summarize(nodes, [], now=NOW)
        assert [snap.partition for snap in snapshots] == ["debug", "gpu"]
        assert all(snap.gpu_types == expected for snap in snapshots)
        assert summarize_cluster(nodes, [], now=NOW).gpu_types == expected


def test_slurm_22_05_untyped_gpus_have_no_type() -> None:
    nodes = parse_sinfo(fixture("slurm/sinfo_gpu.txt"))
    assert summarize(nodes, [], now=NOW)[0].gpu_types == [avail(None, 4, 2)]


def test_jobs_asking_gpus_per_job_per_task_and_per_node_count_their_total() -> None:
    """Recorded on 22.05: --gpus=2 (TresPerJob), -n3 --gpus-per-task=1 (TresPerTask), --gpus-per-node=2."""
    by_name = {job.name: job.gpus for job in parse_scontrol_jobs(fixture("slurm/scontrol_show_job_gpu_requests.txt"))}
    assert by_name == {"gpus2": 2, "gpt": 3, "gpn": 2}
    assert {job.name: job.gpus for job in parse_squeue(fixture("slurm/squeue_gpu_requests.txt"))} == by_name


def test_slurm_24_11_typed_requests_count_their_gpus() -> None:
    jobs = {job.name: job.gpus for job in parse_squeue(fixture("slurm-24.11/squeue_jobs.txt"))}
    assert (jobs["a100"], jobs["gpus2"], jobs["v100x2"]) == (1, 2, 2)
