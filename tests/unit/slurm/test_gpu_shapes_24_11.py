"""GPU counts on lab24's mixed typed node, as Slurm 24.11 printed them (tests/fixtures/slurm-24.11/README.md).

node24 has ``Gres=gpu:a100:2,gpu:v100:2`` and is in partitions debug and gpu. While the node recordings were
made, job 26 held one a100 (``--gres=gpu:a100:1``) and job 27 one a100 and one v100 (``--gpus=2``); 28 waited
for two v100s. Counts per type are not read here (yet): these tests pin the totals svc shows for such a node.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from svc_host.domain.resources import NodeInfo
from svc_host.slurm.parse import gpus_in_gres, gpus_in_tres, parse_scontrol_nodes, parse_sinfo, parse_squeue
from svc_host.slurm.resources import summarize, summarize_cluster

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm-24.11"
NOW = datetime(2026, 11, 27, 0, 26, 20, tzinfo=UTC)


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _view(nodes: list[NodeInfo]) -> set[tuple[str, str, str, int, int, int]]:
    return {(n.name, n.partition, n.raw_state.lower(), n.cpus, n.gpus_total, n.gpus_used) for n in nodes}


def test_sinfo_counts_every_gpu_of_both_types_in_each_partition() -> None:
    expected = {("node24", "debug", "mixed", 8, 4, 3), ("node24", "gpu", "mixed", 8, 4, 3)}
    assert _view(parse_sinfo(_read("sinfo.txt"))) == expected
    assert _view(parse_sinfo(_read("sinfo_gpu.txt"))) == {("node24", "gpu", "mixed", 8, 4, 3)}


def test_scontrol_without_gres_used_counts_the_typed_alloc_tres_once() -> None:
    # svc's `scontrol --oneliner show node` prints no GresUsed; AllocTRES=...,gres/gpu=3,gres/gpu:a100=2,gres/gpu:v100=1
    plain = parse_scontrol_nodes(_read("scontrol_show_node.txt"))
    detailed = parse_scontrol_nodes(_read("scontrol_show_node_details.txt"))  # GresUsed with (IDX:...)
    assert _view(plain) == _view(detailed) == _view(parse_sinfo(_read("sinfo.txt")))


def test_gres_and_tres_strings_of_typed_gpus() -> None:
    assert gpus_in_gres("gpu:a100:2,gpu:v100:2") == 4
    assert gpus_in_gres("gpu:a100:2(IDX:0-1),gpu:v100:1(IDX:2)") == 3
    assert gpus_in_gres("gpu:a100:0(IDX:N/A),gpu:v100:0(IDX:N/A)") == 0
    assert gpus_in_tres("cpu=7,mem=7000M,gres/gpu=3,gres/gpu:a100=2,gres/gpu:v100=1") == 3
    # sacct sorts the keys: the typed ones come before the total
    assert gpus_in_tres("billing=1,cpu=1,gres/gpu:a100=1,gres/gpu:v100=1,gres/gpu=2,mem=1000M,node=1") == 2


def test_partitions_offer_what_is_left_of_the_mixed_node() -> None:
    running = parse_squeue(_read("squeue_jobs.txt"))
    snapshots = {snap.partition: snap for snap in summarize(parse_sinfo(_read("sinfo.txt")), running, now=NOW)}
    gpu = snapshots["gpu"]
    assert (gpu.total_gpus, gpu.gpus_in_use, gpu.gpus_available, gpu.jobs_running) == (4, 3, 1, 2)
    assert gpu.has_available_gpus
    assert (snapshots["debug"].gpus_available, snapshots["debug"].jobs_running) == (1, 6)
    whole = summarize_cluster(parse_sinfo(_read("sinfo.txt")), running, now=NOW)
    assert (whole.total_gpus, whole.gpus_in_use, whole.nodes_total) == (4, 3, 1)  # one node, in two partitions
