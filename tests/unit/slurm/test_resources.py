"""Per-partition GPU snapshots from nodes and running jobs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.resources import NodeInfo
from svc_host.slurm.parse import parse_sinfo, parse_squeue
from svc_host.slurm.resources import summarize

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _node(name: str, partition: str, state: str, total: int, used: int) -> NodeInfo:
    return NodeInfo(name=name, partition=partition, raw_state=state, cpus=8, gpus_total=total, gpus_used=used)


def _job(job_id: str, partition: str, state: JobState) -> JobStatus:
    return JobStatus(job_id=job_id, state=state, raw_state=state.value, partition=partition)


NODES = [
    _node("a", "gpu", "mixed", 4, 2),
    _node("b", "gpu", "allocated", 4, 4),
    _node("c", "gpu", "idle", 4, 0),
    _node("d", "gpu", "drained", 4, 0),
    _node("e", "gpu", "down*", 4, 0),
    _node("a", "debug", "mixed", 4, 2),
    _node("f", "cpu", "idle", 0, 0),
]
JOBS = [
    _job("1", "gpu", JobState.RUNNING),
    _job("2", "gpu", JobState.RUNNING),
    _job("3", "gpu", JobState.PENDING),
    _job("4", "debug", JobState.RUNNING),
]


def test_one_snapshot_per_partition_sorted_by_name() -> None:
    assert [s.partition for s in summarize(NODES, JOBS, now=NOW)] == ["cpu", "debug", "gpu"]


def test_down_and_drained_gpus_are_not_offered() -> None:
    [gpu] = summarize(NODES, JOBS, now=NOW, partition="gpu")
    assert gpu.timestamp == NOW
    assert (gpu.total_gpus, gpu.gpus_in_use, gpu.gpus_available) == (12, 6, 6)
    assert (gpu.nodes_total, gpu.nodes_idle, gpu.nodes_down) == (5, 1, 2)
    assert gpu.jobs_running == 2
    assert gpu.gpu_utilization == 0.5
    assert gpu.has_available_gpus


def test_partition_without_gpus_is_zero_not_a_division_error() -> None:
    [cpu] = summarize(NODES, JOBS, now=NOW, partition="cpu")
    assert (cpu.total_gpus, cpu.gpus_available, cpu.gpu_utilization, cpu.has_available_gpus) == (0, 0, 0.0, False)


def test_full_partition_has_no_available_gpus() -> None:
    [snap] = summarize([_node("b", "gpu", "allocated", 4, 4)], [], now=NOW)
    assert (snap.gpus_available, snap.gpu_utilization, snap.has_available_gpus) == (0, 1.0, False)


def test_utilization_is_rounded() -> None:
    [snap] = summarize([_node("a", "p", "mixed", 3, 1)], [], now=NOW)
    assert snap.gpu_utilization == 0.3333


def test_unknown_partition_is_no_snapshot() -> None:
    assert summarize(NODES, JOBS, now=NOW, partition="nope") == []
    assert summarize([], [], now=NOW) == []


def test_recorded_cluster_with_a_two_gpu_job_running() -> None:
    """The dev cluster: one node with 4 GPUs in debug, gpu and multi; multi's second node is down."""
    nodes = parse_sinfo((FIXTURES / "sinfo.txt").read_text(encoding="utf-8"))
    jobs = parse_squeue((FIXTURES / "squeue_jobs.txt").read_text(encoding="utf-8"))
    snaps = {snap.partition: snap for snap in summarize(nodes, jobs, now=NOW)}
    assert list(snaps) == ["debug", "gpu", "multi"]
    numbers = {
        name: (s.total_gpus, s.gpus_in_use, s.gpus_available, s.jobs_running, s.nodes_total, s.nodes_idle, s.nodes_down)
        for name, s in snaps.items()
    }
    # GRES in use is per node: the gpu job's two GPUs are busy in every partition holding that node.
    assert numbers == {
        "debug": (4, 2, 2, 6, 1, 0, 0),
        "gpu": (4, 2, 2, 1, 1, 0, 0),
        "multi": (4, 2, 2, 0, 2, 0, 1),
    }
    assert snaps["gpu"].gpu_utilization == 0.5
    assert snaps["gpu"].has_available_gpus
    [gpu] = summarize(nodes, jobs, now=NOW, partition="gpu")
    assert gpu == snaps["gpu"]


def test_partitions_sharing_a_node_name_each_other() -> None:
    """The dev node is in debug, gpu and multi (recorded sinfo): each partition shows its use, and names the others
    that show it too."""
    nodes = parse_sinfo((FIXTURES / "sinfo.txt").read_text(encoding="utf-8"))
    snaps = {s.partition: s for s in summarize(nodes, [], now=NOW)}
    assert snaps["debug"].shares_nodes_with == ["gpu", "multi"]
    assert snaps["gpu"].shares_nodes_with == ["debug", "multi"]
    assert (snaps["debug"].gpus_in_use, snaps["gpu"].gpus_in_use) == (2, 2)  # the same two GPUs
    by_name = {s.partition: s.shares_nodes_with for s in summarize(NODES, JOBS, now=NOW)}
    assert by_name == {"cpu": [], "debug": ["gpu"], "gpu": ["debug"]}
